/// Where an authenticated API request may go (`sfauth request`): a path is resolved against the
/// account's instance URL, and the token is sent only to the account's own hosts (its instance, its
/// authorization server) unless the caller allows another — a bearer token must not leak to a host
/// that merely appeared in a URL.
public enum APITarget {
    /// The absolute URL for `pathOrURL`: an absolute http(s) URL as it is, or a path (`/services/data/`)
    /// appended to `base`.
    ///
    /// - Throws: `OAuthError.configuration` for a path when there is no base URL, or for anything
    ///   that is neither a path nor an absolute http(s) URL.
    public static func url(for pathOrURL: String, base: String?) throws(OAuthError) -> String {
        if EndpointURL.parts(of: pathOrURL) != nil { return pathOrURL }
        guard pathOrURL.hasPrefix("/") else {
            throw .configuration("'\(TerminalText.escaped(pathOrURL))' is neither a path (/services/data/) nor an absolute https URL")
        }
        guard let base, EndpointURL.parts(of: base) != nil else {
            throw .configuration("the account has no instance URL to resolve '\(TerminalText.escaped(pathOrURL))' against; give the whole URL")
        }
        var trimmed = Substring(base)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return trimmed + pathOrURL
    }

    /// Refuses `url` unless it is within `resource` (`ProtectedResource.covers`) or its host is one
    /// of `allowedHosts`: the token of an account bound to a protected resource goes nowhere else.
    public static func requireWithin(_ resource: String, _ url: String, allowedHosts: [String]) throws(OAuthError) {
        if ProtectedResource.covers(url, resource: resource) { return }
        guard let host = try disallowedHost(of: url, allowedHosts: allowedHosts) else { return }
        throw .configuration(
            Problem(
                "\(TerminalText.escaped(url)) is outside \(resource), the resource the account's token is bound to, so the token is not sent there",
                remedy: .allowHost(host)))
    }

    /// `host` or `host:port` as `allowedHosts` and `--allow-host` name them, lower-cased; IPv6 in
    /// brackets.
    public static func hostName(of url: String) -> String? {
        guard let parts = EndpointURL.parts(of: url) else { return nil }
        let host = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        return host + (parts.port.map { ":\($0)" } ?? "")
    }

    /// The hosts an account's token is meant for: its instance and its authorization server.
    public static func ownHosts(of credentials: OAuthCredentials) -> [String] {
        [credentials.instanceURL, credentials.server.issuer, credentials.server.tokenEndpoint, credentials.server.userinfoEndpoint]
            .compactMap { $0.flatMap(hostName(of:)) }
    }

    /// Refuses `url` unless its host (with its port, when it has one) is one of `allowedHosts`.
    public static func requireAllowed(_ url: String, allowedHosts: [String]) throws(OAuthError) {
        guard let host = try disallowedHost(of: url, allowedHosts: allowedHosts) else { return }
        throw .configuration(
            Problem(
                "\(host) is not one of the account's own hosts (\(allowedHosts.joined(separator: ", "))), so its token is not sent there",
                remedy: .allowHost(host)))
    }

    /// `url`'s `host[:port]` when `allowedHosts` does not name it, `nil` when it does; a host allowed
    /// without a port allows it on any port.
    ///
    /// - Throws: `OAuthError.configuration` when `url` is not an absolute http(s) URL.
    private static func disallowedHost(of url: String, allowedHosts: [String]) throws(OAuthError) -> String? {
        guard let host = hostName(of: url), let parts = EndpointURL.parts(of: url) else {
            throw .configuration("'\(TerminalText.escaped(url))' is not an absolute http(s) URL")
        }
        let bare = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        let allowed = Set(allowedHosts.map { $0.lowercased() })
        return allowed.contains(host) || allowed.contains(bare) ? nil : host
    }
}
