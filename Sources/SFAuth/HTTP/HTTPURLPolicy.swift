import Glibc

/// Where a request goes, as far as the transport policy is concerned: scheme, host and port,
/// parsed without any I/O.
struct HTTPEndpoint: Sendable, Equatable {
    /// `http` or `https`, lower-cased.
    var scheme: String
    /// The host as written in the URL, lower-cased; an IPv6 literal keeps its brackets (`[::1]`).
    var host: String
    /// The explicit port, or the scheme's default (80, 443).
    var port: Int

    /// `host:port`, for error messages.
    var display: String { "\(host):\(port)" }

    /// Whether `host` is a loopback address or `localhost`: the core's rule, which also decides which
    /// endpoints configuration accepts, so both checks give one answer.
    var isLoopback: Bool { EndpointURL.isLoopback(host: host) }
}

/// The rule every request obeys before any network I/O: only `https`, or plain `http` to a
/// loopback host (`127.0.0.0/8`, `[::1]`, `localhost`).
enum HTTPURLPolicy {
    /// Parses `url` and applies the rule.
    ///
    /// - Throws: `HTTPTransportError` of kind `.insecureURL` when the URL is malformed, uses another
    ///   scheme, or sends plain http to a host that is not loopback.
    static func endpoint(for url: String, method: String) throws(HTTPTransportError) -> HTTPEndpoint {
        // Characters that a C string, a request line or libcurl's parser could read differently.
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw malformed("the URL contains a space or a control character")
        }
        guard let separator = url.firstRange(of: "://") else {
            throw malformed("the URL is not absolute (no scheme://)")
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let authority = rest.prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@[]%")
        if authority.contains(where: { !allowed.contains($0) }) {
            throw malformed("the host part contains a character that is not allowed there")
        }
        // Userinfo ends at the last "@" of the authority.
        let hostAndPort = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority[...]

        var host: Substring
        var portText: Substring
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { throw malformed("unterminated IPv6 address") }
            host = hostAndPort[...close]
            portText = hostAndPort[hostAndPort.index(after: close)...]
            if !portText.isEmpty {
                guard portText.hasPrefix(":") else { throw malformed("unexpected text after the IPv6 address") }
                portText = portText.dropFirst()
            }
        } else if let colon = hostAndPort.firstIndex(of: ":") {
            host = hostAndPort[..<colon]
            portText = hostAndPort[hostAndPort.index(after: colon)...]
        } else {
            host = hostAndPort
            portText = ""
        }
        guard !host.isEmpty else { throw malformed("the URL has no host") }
        let defaultPort = scheme == "https" ? 443 : 80
        var port = defaultPort
        if !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portText), (1...65535).contains(value)
            else { throw malformed("invalid port \"\(portText)\"") }
            port = value
        }
        let endpoint = HTTPEndpoint(scheme: scheme, host: host.lowercased(), port: port)
        try check(endpoint, method: method)
        return endpoint

        func malformed(_ why: String) -> HTTPTransportError {
            HTTPTransportError(kind: .insecureURL, message: "refusing to send \(method) to a malformed URL: \(why)")
        }
    }

    /// Applies the rule to an already parsed scheme and host (also used on libcurl's own parse).
    static func check(_ endpoint: HTTPEndpoint, method: String) throws(HTTPTransportError) {
        switch endpoint.scheme {
        case "https":
            return
        case "http" where endpoint.isLoopback:
            return
        case "http":
            throw HTTPTransportError(
                kind: .insecureURL,
                message: "refusing to send \(method) over plain http to \(endpoint.host): "
                    + "only https, or http to a loopback address, is allowed")
        default:
            throw HTTPTransportError(
                kind: .insecureURL,
                message: "refusing to send \(method) to \(endpoint.scheme)://\(endpoint.host): "
                    + "only https, or http to a loopback address, is allowed")
        }
    }
}
