/// An SFDX auth URL, the format `sf org login sfdx-url` reads and `sf org display --verbose` prints:
/// `force://<client id>:<client secret>:<refresh token>@<instance>` (the secret may be empty; older
/// files add `:<username>` after the refresh token). It carries a long-lived refresh token: a
/// secret, for CI secret stores only.
package struct SFDXAuthURL: Sendable, Equatable {
    /// The connected app's client id.
    package var clientId: String
    /// The client secret; `nil` when empty (a public app such as `PlatformCLI`).
    package var clientSecret: String?
    /// The refresh token.
    package var refreshToken: String
    /// The instance or login host, as an https URL.
    package var instanceURL: String

    /// Creates an auth URL value.
    package init(clientId: String, clientSecret: String?, refreshToken: String, instanceURL: String) {
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.refreshToken = refreshToken
        self.instanceURL = instanceURL
    }

    /// Reads `text` (surrounding whitespace ignored).
    ///
    /// - Throws: `OAuthError.configuration` naming what is missing — never echoing the token.
    package init(parsing text: String) throws(OAuthError) {
        let trimmed = Substring(text).drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        let trimmedText = String(trimmed)
        guard trimmedText.hasPrefix("force://") else {
            throw .configuration("an SFDX auth URL starts with force:// (force://<client id>:<secret>:<refresh token>@<instance>)")
        }
        let body = trimmedText.dropFirst("force://".count)
        // The last @ ends the credentials, because the older `:<username>` after the refresh token
        // is an email address. So that no URL can smuggle another host past that rule
        // (`…@acme.my.salesforce.com#@evil.example`), the client id, secret and refresh token may hold
        // none of @ # ? / or spaces, and the instance must be a plain host or https URL.
        guard let at = body.lastIndex(of: "@") else {
            throw .configuration("the SFDX auth URL has no @<instance> after its refresh token")
        }
        let parts = body[..<at].split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, !parts[0].isEmpty, !parts[2].isEmpty else {
            throw .configuration("the SFDX auth URL needs <client id>:<secret>:<refresh token> before the @ (the secret may be empty)")
        }
        guard parts.prefix(3).allSatisfy({ !$0.contains(where: { "@#?/\\".contains($0) || $0.isWhitespace }) }) else {
            throw .configuration("the client id, secret and refresh token of an SFDX auth URL contain no @, #, ?, / or spaces; check the URL")
        }
        var instance = String(body[body.index(after: at)...])
        while instance.hasSuffix("/") { instance.removeLast() }
        guard !instance.contains(where: { "@#?\\ ".contains($0) }) else {
            throw .configuration("the instance of the SFDX auth URL must be a plain host or https URL, without @, #, ? or spaces")
        }
        if !instance.contains("://") { instance = "https://" + instance }
        try EndpointURL.requireSecure(instance, name: "instance in the SFDX auth URL")
        self.init(
            clientId: String(parts[0]), clientSecret: parts[1].isEmpty ? nil : String(parts[1]),
            refreshToken: String(parts[2]), instanceURL: instance)
    }

    /// Whether the instance is at one of Salesforce's own domains (`*.salesforce.com`,
    /// `*.force.com`, `*.site.com`, …). Another host is not refused — a test stub, a proxy — but the
    /// refresh token and any client secret go there, so the user is told.
    package var isSalesforceHost: Bool {
        guard let host = EndpointURL.parts(of: instanceURL)?.host.lowercased() else { return false }
        return Self.salesforceDomains.contains { host == $0 || host.hasSuffix("." + $0) }
    }

    /// Salesforce's domains for orgs, sandboxes, sites and its government and China clouds.
    static let salesforceDomains = [
        "salesforce.com", "force.com", "site.com", "cloudforce.com", "database.com",
        "salesforce-setup.com", "salesforce.mil", "sfcrmproducts.cn",
    ]

    /// `force://client:secret:token@host` — the instance without `https://`, as `sf` writes it.
    package var text: String {
        let host = instanceURL.hasPrefix("https://") ? String(instanceURL.dropFirst("https://".count)) : instanceURL
        return "force://\(clientId):\(clientSecret ?? ""):\(refreshToken)@\(host)"
    }
}
