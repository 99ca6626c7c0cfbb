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
        /// GitLab: gitlab.com, or the self-managed instance at a host given at sign-in; its issuer is
        /// the instance's root (`GitLab`).
        case gitLabHost
        /// Microsoft Entra ID: a tenant under an authority (`Entra`).
        case entraTenant
        /// Okta: an authorization server's issuer; an org's bare URL means its `default` custom
        /// authorization server (`Okta`).
        case oktaIssuer
        /// Auth0: the tenant's domain, whose issuer ends with `/` (`Auth0`).
        case auth0Domain
        /// Amazon Cognito: the user pool's issuer, and its domain for the OAuth endpoints (`Cognito`).
        case cognitoUserPool
    }

    /// What points a preset at the user's own instance: the values of its keys (`--host`,
    /// `--issuer`, `--tenant`, `--authority`, `--domain`); `nil` takes the preset's default.
    public struct Instance: Sendable, Equatable {
        /// A forge's host (GitHub, GitLab).
        public var host: String?
        /// An issuer (Google, Okta, Auth0, Keycloak, Cognito, any OpenID Connect provider).
        public var issuer: String?
        /// An Entra tenant: `organizations` (default), `common`, `consumers`, or a tenant id or domain.
        public var tenant: String?
        /// An Entra authority (sovereign clouds). Default: `https://login.microsoftonline.com`.
        public var authority: String?
        /// A Cognito user pool's domain (`DOMAIN.auth.REGION.amazoncognito.com`).
        public var domain: String?

        /// Creates the instance settings; leave out what the preset does not take.
        public init(host: String? = nil, issuer: String? = nil, tenant: String? = nil, authority: String? = nil, domain: String? = nil) {
            self.host = host
            self.issuer = issuer
            self.tenant = tenant
            self.authority = authority
            self.domain = domain
        }
    }

    /// Where an issuer-based preset's server is, before its metadata is read.
    public struct DiscoveryTarget: Sendable, Equatable {
        /// The issuer whose metadata to read (`DiscoveryClient.discover(issuer:)`).
        public var issuer: String
        /// Endpoints that replace the discovered ones (Cognito's domain).
        public var authorizationEndpoint: String?
        /// See `authorizationEndpoint`.
        public var tokenEndpoint: String?
        /// See `authorizationEndpoint`.
        public var revocationEndpoint: String?
        /// See `authorizationEndpoint`.
        public var userinfoEndpoint: String?
        /// What the person should know about the choice (Okta's default authorization server).
        public var notice: String?

        /// The discovered `server` with this target's endpoints in place.
        public func applied(to server: AuthorizationServer) -> AuthorizationServer {
            var server = server
            if let authorizationEndpoint { server.authorizationEndpoint = authorizationEndpoint }
            if let tokenEndpoint { server.tokenEndpoint = tokenEndpoint }
            if let revocationEndpoint { server.revocationEndpoint = revocationEndpoint }
            if let userinfoEndpoint { server.userinfoEndpoint = userinfoEndpoint }
            return server
        }
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
    /// Whether the API the token is for is named by an `audience` authorization parameter
    /// (Auth0: without one the access token is opaque, good only for `/userinfo`).
    public var takesAudience = false
    /// What a user registers at the provider to use this preset, step by step: the console page, the
    /// kind of client, the redirect URI exactly as sfauth sends it, the scopes. `nil` when the preset
    /// comes with a client (Salesforce's).
    public var registration: String?
    /// What the person should know before signing in (Entra's redirect URI, shown on Microsoft's own
    /// page when it is not registered).
    public var signInNotice: String?

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

    /// Every preset, by name.
    public static let all: [ProviderPreset] = [
        .github, .gitlab, .google, .entra, .okta, .auth0, .keycloak, .cognito, .oidc, .salesforce, .salesforceMyDomain, .salesforceSandbox,
    ]

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

    /// Where an issuer-based preset's server is for `instance`: the issuer to discover and the
    /// endpoints that replace discovered ones; `nil` for presets whose server is known without
    /// metadata (`server(instanceURL:host:)`: Salesforce, GitHub).
    ///
    /// ```swift
    /// let target = try ProviderPreset.entra.discoveryTarget(ProviderPreset.Instance(tenant: "common"))!
    /// let metadata = try await DiscoveryClient(cacheDirectory: nil).discover(issuer: target.issuer)
    /// let server = target.applied(to: metadata.server)
    /// ```
    ///
    /// - Throws: `OAuthError.configuration` when a key the preset needs is missing or is not what
    ///   it should be (a host that is not one, a tenant that is not one).
    public func discoveryTarget(_ instance: Instance) throws(OAuthError) -> DiscoveryTarget? {
        func required(_ value: String?, _ what: String) throws(OAuthError) -> String {
            guard let value, !value.isEmpty else { throw .configuration("the \(name) preset needs \(what)") }
            return value
        }
        switch serverLocation {
        case .salesforceLoginHost, .salesforceMyDomain, .gitHubHost:
            return nil
        case .gitLabHost:
            if let issuer = instance.issuer { return DiscoveryTarget(issuer: issuer) }
            return DiscoveryTarget(issuer: try GitLab.issuer(host: instance.host ?? GitLab.defaultHost))
        case .entraTenant:
            if let issuer = instance.issuer { return DiscoveryTarget(issuer: issuer) }
            return DiscoveryTarget(
                issuer: try Entra.issuer(tenant: instance.tenant ?? Entra.defaultTenant, authority: instance.authority ?? Entra.defaultAuthority))
        case .issuer:
            return DiscoveryTarget(issuer: try required(instance.issuer ?? issuer, "an issuer"))
        case .oktaIssuer:
            let (issuer, notice) = Okta.issuer(given: try required(instance.issuer, "the issuer of your Okta org (https://ORG.okta.com)"))
            return DiscoveryTarget(issuer: issuer, notice: notice)
        case .auth0Domain:
            return DiscoveryTarget(issuer: Auth0.issuer(domain: try required(instance.issuer, "your Auth0 tenant's domain as the issuer")))
        case .cognitoUserPool:
            var target = DiscoveryTarget(
                issuer: try required(instance.issuer, "the user pool's issuer (https://cognito-idp.REGION.amazonaws.com/POOL_ID)"))
            if let domain = instance.domain {
                let endpoints = try Cognito.endpoints(domain: domain)
                target.authorizationEndpoint = endpoints.authorize
                target.tokenEndpoint = endpoints.token
                target.revocationEndpoint = endpoints.revoke
                target.userinfoEndpoint = endpoints.userinfo
            }
            return target
        }
    }

    /// The authorization server: the fixed one, for a My Domain the one at `instanceURL`, for GitHub
    /// the one at `host` (default github.com); `nil` when the server must be discovered from an
    /// issuer, a My Domain is not given, or `host` is not one.
    public func server(instanceURL: String? = nil, host: String? = nil) -> AuthorizationServer? {
        switch serverLocation {
        case .gitHubHost: return try? GitHub.server(host: host ?? GitHub.defaultHost)
        case .salesforceLoginHost(let host): return Salesforce.server(loginHost: host)
        case .salesforceMyDomain: return instanceURL.map(Salesforce.server(loginHost:))
        case .issuer, .gitLabHost, .entraTenant, .oktaIssuer, .auth0Domain, .cognitoUserPool: return nil
        }
    }

    /// The client with this preset's scopes and redirect: `clientId`, else the preset's own; `nil`
    /// when neither is given.
    ///
    /// - Parameters:
    ///   - clientId: the client the user registered; `nil` takes the preset's own, when it has one.
    ///   - audience: for a preset that `takesAudience` (Auth0), the API the access token is for, sent
    ///     as the `audience` authorization parameter; ignored by the others.
    public func client(clientId: String? = nil, audience: String? = nil) -> ClientConfiguration? {
        guard let clientId = clientId ?? self.clientId else { return nil }
        var parameters = authorizationParameters
        if takesAudience, let audience { parameters.append(AuthorizationParameter(name: "audience", value: audience)) }
        return ClientConfiguration(clientId: clientId, scopes: scopes, redirect: redirect, additionalAuthorizationParameters: parameters)
    }
}
