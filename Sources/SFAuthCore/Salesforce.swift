/// Salesforce's conventions, kept in one place so the rest of the core follows the RFCs only.
public enum Salesforce {
    /// The production login host.
    public static let productionLoginHost = "login.salesforce.com"
    /// The sandbox login host.
    public static let sandboxLoginHost = "test.salesforce.com"
    /// The client id of the connected app Salesforce's own CLI uses (`PlatformCLI`), which registers
    /// exactly `http://localhost:1717/OauthRedirect`. Use your own connected app with `--client-id`.
    public static let defaultClientId = "PlatformCLI"
    /// The default scopes: API access and a refresh token.
    public static let defaultScopes = ["refresh_token", "api", "web"]
    /// The exact redirect Salesforce's CLI registers: Salesforce matches callbacks exactly, port included,
    /// and allows plain http only for `localhost`.
    public static let defaultRedirect = RedirectConfiguration(host: "localhost", port: 1717, path: "/OauthRedirect")

    /// The endpoints of a Salesforce login host or My Domain, e.g. `login.salesforce.com` or
    /// `https://acme.my.salesforce.com`.
    public static func server(loginHost: String) -> AuthorizationServer {
        var base = loginHost
        if !base.hasPrefix("https://") && !base.hasPrefix("http://") { base = "https://" + base }
        while base.hasSuffix("/") { base.removeLast() }
        return AuthorizationServer(
            authorizationEndpoint: base + "/services/oauth2/authorize",
            tokenEndpoint: base + "/services/oauth2/token",
            revocationEndpoint: base + "/services/oauth2/revoke",
            userinfoEndpoint: base + "/services/oauth2/userinfo",
            issuer: base,
            flavor: .salesforce)
    }

    /// The org and user ids of an identity URL `https://login.salesforce.com/id/<org id>/<user id>`.
    public static func identity(fromIdentityURL url: String) -> (organizationId: String, userId: String)? {
        let parts = url.split(separator: "/")
        guard let index = parts.lastIndex(of: "id"), parts.count == index + 3 else { return nil }
        return (String(parts[index + 1]), String(parts[index + 2]))
    }
}
