/// A provider's defaults for signing in, as a value: where its server is, the client everyone may
/// use (when it offers one), the scopes, and the redirect it accepts. A program embedding SFAuth
/// builds its sign-in from one; sfauth's `--preset NAME` (or a profile's `preset =`) names one.
///
/// ```swift
/// let preset = ProviderPreset.salesforceSandbox
/// let configuration = OAuthCoordinator.Configuration(server: preset.server()!, client: preset.client()!, app: app)
/// ```
public struct ProviderPreset: Sendable, Equatable {
    /// Where a preset's authorization server is.
    public enum ServerLocation: Sendable, Equatable {
        /// A Salesforce login host everyone signs in at, e.g. `https://login.salesforce.com`.
        case salesforceLoginHost(String)
        /// The user's own Salesforce My Domain (`https://NAME.my.salesforce.com`), given at sign-in.
        case salesforceMyDomain
        /// Any OpenID Connect provider, given by its issuer; the endpoints come from its metadata
        /// (OpenID Connect Discovery 1.0, RFC 8414).
        case issuer
        /// GitHub: github.com, or the GitHub Enterprise Server at a host given at sign-in (`GitHub`).
        case gitHubHost
    }

    /// The name sfauth knows it by: `salesforce`, `salesforce-sandbox`, `salesforce-mydomain`, `oidc`.
    public let name: String
    /// One line saying what it is for.
    public let summary: String
    /// Where its server is.
    public let serverLocation: ServerLocation
    /// The `client_id` of a public client the provider lets everyone use (Salesforce's `PlatformCLI`);
    /// `nil` when each user registers their own.
    public let clientId: String?
    /// The scopes asked for by default.
    public let scopes: [String]
    /// The redirect the provider's client accepts.
    public let redirect: RedirectConfiguration
    /// The issuer of a provider that has one for everyone (Google's); `nil` when each user names
    /// their own (`oidc`) or the server is not found by issuer.
    public let issuer: String?
    /// Parameters the provider needs on the authorization request, e.g. Google's
    /// `access_type=offline`.
    public let authorizationParameters: [AuthorizationParameter]

    /// Salesforce production: login.salesforce.com, through the connected app of Salesforce's own CLI.
    /// The preset used when nothing else is chosen.
    public static let salesforce = ProviderPreset(
        name: "salesforce", summary: "Salesforce production (login.salesforce.com)",
        serverLocation: .salesforceLoginHost("https://" + Salesforce.productionLoginHost))

    /// A Salesforce sandbox: test.salesforce.com, through the connected app of Salesforce's own CLI.
    public static let salesforceSandbox = ProviderPreset(
        name: "salesforce-sandbox", summary: "Salesforce sandbox (test.salesforce.com)",
        serverLocation: .salesforceLoginHost("https://" + Salesforce.sandboxLoginHost))

    /// A Salesforce org's My Domain (`https://NAME.my.salesforce.com`, or a sandbox's
    /// `https://NAME--SANDBOX.sandbox.my.salesforce.com`), through the connected app of Salesforce's
    /// own CLI.
    public static let salesforceMyDomain = ProviderPreset(
        name: "salesforce-mydomain", summary: "Salesforce My Domain (give instance_url)", serverLocation: .salesforceMyDomain)

    /// Any OpenID Connect provider, found through its issuer's published metadata, with a client
    /// the user registered there: who signed in (`openid`) and a refresh token (`offline_access`,
    /// OpenID Connect Core §11), on any free loopback port (RFC 8252 §7.3).
    public static let oidc = ProviderPreset(
        name: "oidc", summary: "OpenID Connect provider by issuer (give issuer and client_id)", serverLocation: .issuer,
        clientId: nil, scopes: ["openid", "offline_access"], redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"))

    /// GitHub (github.com, or an Enterprise Server's `host`) through an OAuth app or a GitHub App the
    /// user registers, with its client secret (GitHub's web flow requires it), asking for `repo`
    /// (what git and the repository APIs need), on any free loopback port: GitHub accepts any port
    /// for a registered `http://127.0.0.1/callback` (docs.github.com, "Loopback redirect urls").
    public static let github = ProviderPreset(
        name: "github", summary: "GitHub or GitHub Enterprise Server (give client_id; host for an Enterprise Server)",
        serverLocation: .gitHubHost, clientId: nil, scopes: ["repo"],
        redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"))

    /// Google, through a Desktop ("installed app") OAuth client the user creates in the Google Cloud
    /// console, with its client secret — which Google requires at the code exchange and at every
    /// refresh, and documents as not confidential for installed apps. A refresh token comes only
    /// with `access_type=offline`, and again on a later sign-in only when consent is shown
    /// (`prompt=consent`): both are asked for. Any free loopback port
    /// (developers.google.com/identity/protocols/oauth2/native-app).
    public static let google = ProviderPreset(
        name: "google", summary: "Google accounts (give client_id of a Desktop client, and its secret)", serverLocation: .issuer,
        clientId: nil, scopes: ["openid", "email", "profile"], redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"),
        issuer: "https://accounts.google.com",
        authorizationParameters: [
            AuthorizationParameter(name: "access_type", value: "offline"), AuthorizationParameter(name: "prompt", value: "consent"),
        ])

    /// Every preset, by name.
    public static let all: [ProviderPreset] = [.github, .google, .oidc, .salesforce, .salesforceMyDomain, .salesforceSandbox]

    /// The preset called `name`, or `nil`.
    public static func named(_ name: String) -> ProviderPreset? {
        all.first { $0.name == name }
    }

    /// Creates a preset. The Salesforce ones default to the connected app of Salesforce's own CLI
    /// (`PlatformCLI`), which registers exactly `http://localhost:1717/OauthRedirect`: Salesforce
    /// matches callbacks exactly, port included, and allows plain http only on `localhost`.
    public init(
        name: String, summary: String, serverLocation: ServerLocation, clientId: String? = Salesforce.defaultClientId,
        scopes: [String] = Salesforce.defaultScopes, redirect: RedirectConfiguration = Salesforce.defaultRedirect,
        issuer: String? = nil, authorizationParameters: [AuthorizationParameter] = []
    ) {
        self.issuer = issuer
        self.authorizationParameters = authorizationParameters
        self.name = name
        self.summary = summary
        self.serverLocation = serverLocation
        self.clientId = clientId
        self.scopes = scopes
        self.redirect = redirect
    }

    /// The authorization server: the fixed one, for a My Domain the one at `instanceURL`, for GitHub
    /// the one at `host` (default github.com); `nil` when the server must be discovered from an
    /// issuer, a My Domain is not given, or `host` is not one.
    public func server(instanceURL: String? = nil, host: String? = nil) -> AuthorizationServer? {
        switch serverLocation {
        case .gitHubHost: return try? GitHub.server(host: host ?? GitHub.defaultHost)
        case .salesforceLoginHost(let host): return Salesforce.server(loginHost: host)
        case .salesforceMyDomain: return instanceURL.map(Salesforce.server(loginHost:))
        case .issuer: return nil
        }
    }

    /// The client with this preset's scopes and redirect: `clientId`, else the preset's own; `nil`
    /// when neither is given.
    public func client(clientId: String? = nil) -> ClientConfiguration? {
        guard let clientId = clientId ?? self.clientId else { return nil }
        return ClientConfiguration(
            clientId: clientId, scopes: scopes, redirect: redirect, additionalAuthorizationParameters: authorizationParameters)
    }
}
