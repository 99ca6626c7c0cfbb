/// The one origin a proxy forwards to (`sfauth proxy UPSTREAM`), with its optional base path:
/// `https://api.example/v1` sends a client's `/x?y` to `https://api.example/v1/x?y`.
package struct ProxyUpstream: Sendable, Equatable {
    /// `https`, or `http` for a loopback host only.
    package var scheme: String
    /// The authority as written, lower-cased: `api.example`, `127.0.0.1:8080`, `[::1]:8080`.
    package var authority: String
    /// The base path without its trailing slash: `""` or `/v1`.
    package var basePath: String

    /// Parses UPSTREAM.
    ///
    /// - Throws: `OAuthError.configuration` for anything but an absolute `https` URL (or `http` to a
    ///   loopback host) without user information, query or fragment.
    package init(parsing url: String) throws(OAuthError) {
        func refused(_ why: String) -> OAuthError {
            .configuration("the upstream URL \(TerminalText.escaped(url)) \(why)")
        }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) { throw refused("contains a space, a control or a non-ASCII character") }
        guard let separator = url.firstRange(of: "://") else { throw refused("is not absolute: give https://host[/base-path]") }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        if rest.contains("?") || rest.contains("#") { throw refused("has a query or a fragment: give only https://host[/base-path]") }
        let authority = rest.prefix(while: { $0 != "/" }).lowercased()
        var path = String(rest.dropFirst(authority.count))
        if authority.contains("@") { throw refused("contains user information: the token is the only credential sent") }
        guard let parts = EndpointURL.parts(of: "\(scheme)://\(authority)/"), !parts.host.isEmpty else {
            throw refused("has no valid host")
        }
        switch scheme {
        case "https": break
        case "http" where EndpointURL.isLoopback(host: parts.host): break
        case "http": throw refused("uses plain http to a host that is not loopback: only https, or http to 127.0.0.1, [::1] or localhost")
        default: throw refused("is not an https URL")
        }
        while path.hasSuffix("/") { path.removeLast() }
        if (try? ProxyRules.checkPath(path.isEmpty ? "/" : path)) == nil {
            throw refused("has a base path with '.' or '..' segments or encoded slashes")
        }
        self.scheme = scheme
        self.authority = authority
        self.basePath = path
    }

    /// `scheme://authority`, e.g. `https://api.example`.
    package var origin: String { "\(scheme)://\(authority)" }

    /// The URL a checked origin-form target (`/x?y`) goes to: origin, base path, target.
    package func url(for target: String) -> String {
        origin + basePath + target
    }
}
