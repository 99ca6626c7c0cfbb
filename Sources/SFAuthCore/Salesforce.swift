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
    /// A host pasted from the browser (a Lightning page, an Experience Cloud site, Setup) becomes
    /// the org's My Domain, where OAuth lives (see `myDomain(forPastedHost:)`).
    public static func server(loginHost: String) -> AuthorizationServer {
        var base = loginHost
        if !base.hasPrefix("https://") && !base.hasPrefix("http://") { base = "https://" + base }
        while base.hasSuffix("/") { base.removeLast() }
        if let schemeEnd = base.firstRange(of: "://") {
            // Only the origin counts: a pasted address may carry a Lightning page's path.
            let afterScheme = base[schemeEnd.upperBound...]
            let host = afterScheme.prefix(while: { $0 != "/" })
            base = base[..<schemeEnd.upperBound] + myDomain(forPastedHost: String(host))
        }
        return AuthorizationServer(
            authorizationEndpoint: base + "/services/oauth2/authorize",
            tokenEndpoint: base + "/services/oauth2/token",
            revocationEndpoint: base + "/services/oauth2/revoke",
            userinfoEndpoint: base + "/services/oauth2/userinfo",
            issuer: base,
            flavor: .salesforce)
    }

    /// The org's My Domain host for a host people copy from their browser: Lightning
    /// (`acme.lightning.force.com`, `acme--dev.sandbox.lightning.force.com`), Experience Cloud sites
    /// (`acme.my.site.com`) and Setup (`acme.my.salesforce-setup.com`) all map to
    /// `acme.my.salesforce.com` (sandboxes: `acme--dev.sandbox.my.salesforce.com`). Other hosts are
    /// returned as they are.
    public static func myDomain(forPastedHost host: String) -> String {
        let lowered = host.lowercased()
        let suffixes: [(pasted: String, myDomain: String)] = [
            (".sandbox.lightning.force.com", ".sandbox.my.salesforce.com"),
            (".develop.lightning.force.com", ".develop.my.salesforce.com"),
            (".lightning.force.com", ".my.salesforce.com"),
            (".sandbox.my.site.com", ".sandbox.my.salesforce.com"),
            (".my.site.com", ".my.salesforce.com"),
            (".sandbox.my.salesforce-setup.com", ".sandbox.my.salesforce.com"),
            (".my.salesforce-setup.com", ".my.salesforce.com"),
        ]
        for (pasted, myDomain) in suffixes where lowered.hasSuffix(pasted) && lowered.count > pasted.count {
            return String(lowered.dropLast(pasted.count)) + myDomain
        }
        return host
    }

    /// The org and user ids of an identity URL `https://login.salesforce.com/id/<org id>/<user id>`.
    package static func identity(fromIdentityURL url: String) -> (organizationId: String, userId: String)? {
        let parts = url.split(separator: "/")
        guard let index = parts.lastIndex(of: "id"), parts.count == index + 3 else { return nil }
        return (String(parts[index + 1]), String(parts[index + 2]))
    }
}
