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
        guard let at = body.lastIndex(of: "@") else {
            throw .configuration("the SFDX auth URL has no @<instance> after its refresh token")
        }
        let parts = body[..<at].split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, !parts[0].isEmpty, !parts[2].isEmpty else {
            throw .configuration("the SFDX auth URL needs <client id>:<secret>:<refresh token> before the @ (the secret may be empty)")
        }
        var instance = String(body[body.index(after: at)...])
        while instance.hasSuffix("/") { instance.removeLast() }
        if !instance.contains("://") { instance = "https://" + instance }
        try EndpointURL.requireSecure(instance, name: "instance in the SFDX auth URL")
        self.init(clientId: String(parts[0]), clientSecret: parts[1].isEmpty ? nil : String(parts[1]),
                  refreshToken: String(parts[2]), instanceURL: instance)
    }

    /// `force://client:secret:token@host` — the instance without `https://`, as `sf` writes it.
    package var text: String {
        let host = instanceURL.hasPrefix("https://") ? String(instanceURL.dropFirst("https://".count)) : instanceURL
        return "force://\(clientId):\(clientSecret ?? ""):\(refreshToken)@\(host)"
    }
}
