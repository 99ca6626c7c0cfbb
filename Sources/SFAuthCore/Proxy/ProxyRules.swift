/// What the proxy forwards and what it refuses, as pure decisions: the request's target and path,
/// the browser checks, and which header fields cross in each direction.
///
/// The proxy adds the user's token to every request it forwards, so anything that could make it
/// forward somewhere else, or for someone else, is refused here: other origins (absolute-form,
/// CONNECT), paths that climb out of the base path, and requests a web page made a browser send
/// (a foreign `Host` after DNS rebinding, a cross-site `Origin` or `Sec-Fetch-Site`).
package enum ProxyRules {
    /// The authorities a client may name in `Host` when the proxy listens on TCP `port`: the loopback
    /// names of this machine, never a DNS name that a rebinding attack could point here.
    package static func acceptedAuthorities(port: UInt16) -> [String] {
        ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
    }

    /// Checks a request before anything is forwarded and returns the origin-form target to append
    /// to the upstream base path (`/x?y`).
    ///
    /// - Parameters:
    ///   - authorities: the accepted `Host` values (TCP), or `nil` on a Unix socket, which no
    ///     browser can reach.
    /// - Throws: `ProxyRefusal` — 405 for CONNECT, 400 for a target that is not origin-form (or
    ///   absolute-form naming the proxy itself), a path with dot segments or encoded separators, a
    ///   missing or repeated `Host`; 403 for a foreign `Host`, `Origin` or `Sec-Fetch-Site`.
    package static func check(_ head: ProxyRequestHead, authorities: [String]?) throws(ProxyRefusal) -> String {
        if head.method == "CONNECT" { throw ProxyRefusal(405, "CONNECT is refused: this is not an open proxy") }
        let target = try originForm(head.target, authorities: authorities)
        try checkPath(String(target.prefix(while: { $0 != "?" })))
        try checkBrowser(head, authorities: authorities)
        return target
    }

    /// The `Host`, `Origin` and `Sec-Fetch-Site` checks (TCP), and `Origin`/`Sec-Fetch-Site` only on a
    /// Unix socket.
    static func checkBrowser(_ head: ProxyRequestHead, authorities: [String]?) throws(ProxyRefusal) {
        let hosts = head.values("host")
        if hosts.count > 1 { throw ProxyRefusal(400, "more than one Host header") }
        if hosts.isEmpty && head.minorVersion == 1 { throw ProxyRefusal(400, "no Host header") }
        if let authorities, let host = hosts.first, !authorities.contains(host.lowercased()) {
            throw ProxyRefusal(403, "Host \(host) is not this proxy's address (a web page's request after DNS rebinding?)")
        }
        if let origin = head.values("origin").first {
            let own = (authorities ?? []).map { "http://\($0)" }
            if !own.contains(origin.lowercased()) {
                throw ProxyRefusal(403, "requests from web pages (Origin \(origin)) are refused")
            }
        }
        for site in head.values("sec-fetch-site") where !["none", "same-origin"].contains(site.lowercased()) {
            throw ProxyRefusal(403, "requests from web pages (Sec-Fetch-Site \(site)) are refused")
        }
    }

    /// The origin-form target (`/path?query`) of a request-target: itself when it is origin-form;
    /// the path of an absolute-form target that names the proxy itself.
    static func originForm(_ target: String, authorities: [String]?) throws(ProxyRefusal) -> String {
        if target.hasPrefix("/") { return target }
        if target == "*" { throw ProxyRefusal(400, "the asterisk-form request target is not supported") }
        if let separator = target.firstRange(of: "://") {
            let scheme = target[..<separator.lowerBound].lowercased()
            let rest = target[separator.upperBound...]
            let authority = rest.prefix(while: { $0 != "/" && $0 != "?" }).lowercased()
            let path = rest.dropFirst(authority.count)
            if scheme == "http", let authorities, authorities.contains(authority) {
                return path.isEmpty ? "/" : (path.hasPrefix("?") ? "/" + path : String(path))
            }
            throw ProxyRefusal(400, "absolute-form request to another origin refused: this is not an open proxy")
        }
        throw ProxyRefusal(400, "the request target must be a path (origin-form)")
    }

    /// Refuses a path that could leave the base path once a server decodes or normalises it: `.`
    /// and `..` segments (also percent-encoded), encoded `/` or `\`, a backslash, malformed
    /// percent-encoding, a fragment.
    package static func checkPath(_ path: String) throws(ProxyRefusal) {
        guard path.hasPrefix("/") else { throw ProxyRefusal(400, "the path must start with /") }
        if path.contains("#") { throw ProxyRefusal(400, "a fragment in the request target") }
        if path.contains("\\") { throw ProxyRefusal(400, "a backslash in the path") }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            guard let decoded = percentDecoded(segment) else { throw ProxyRefusal(400, "malformed percent-encoding in the path") }
            if decoded == [0x2E] || decoded == [0x2E, 0x2E] {
                throw ProxyRefusal(400, "'.' and '..' path segments are refused (they could leave the base path)")
            }
            if decoded.contains(0x2F) || decoded.contains(0x5C) || decoded.contains(0) {
                throw ProxyRefusal(400, "encoded '/', '\\' or NUL in the path")
            }
        }
    }

    /// The bytes of a percent-encoded segment, or `nil` for a `%` not followed by two hex digits.
    static func percentDecoded(_ segment: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = Array(segment.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Header fields

    /// Hop-by-hop fields (RFC 9110 §7.6.1), plus the proxy's own: never forwarded either way.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]

    /// The client's fields that go upstream, in order: without hop-by-hop fields and those its
    /// `Connection` names, without `Authorization` (the proxy sets its own), and without `Host`,
    /// `Content-Length` and `Expect`, which the proxy sets for the upstream connection.
    package static func forwardedRequestFields(_ head: ProxyRequestHead) -> [ProxyHeaderField] {
        let dropped = hopByHop.union(head.tokens("connection")).union(["authorization", "host", "content-length", "expect"])
        return head.headers.filter { !dropped.contains($0.name.lowercased()) }
    }

    /// The upstream response's fields that go to the client, in order: without hop-by-hop fields,
    /// those its `Connection` names, and `Content-Length` (the proxy frames the body itself).
    package static func forwardedResponseFields(_ fields: [ProxyHeaderField]) -> [ProxyHeaderField] {
        let named = fields.filter { $0.name.lowercased() == "connection" }
            .flatMap { $0.value.split(separator: ",") }.map { $0.trimmingOWS.lowercased() }
        let dropped = hopByHop.union(named).union(["content-length"])
        return fields.filter { !dropped.contains($0.name.lowercased()) }
    }

    /// How the proxy delimits a response body it passes on (RFC 9112 §6.3).
    package enum ResponseFraming: Sendable, Equatable {
        /// No body: `HEAD`, 1xx, 204, 304. `Content-Length`, when upstream sent one, is passed on.
        case none(contentLength: String?)
        /// Exactly this `Content-Length`, as upstream said.
        case length(String)
        /// Re-chunked as it arrives (an HTTP/1.1 client).
        case chunked
        /// Until the connection closes (an HTTP/1.0 client, which knows no chunking).
        case untilClose
    }

    /// The framing for a response with `status` and upstream `fields` to a request with `method`
    /// from a client speaking HTTP/1.`minorVersion`.
    package static func responseFraming(status: Int, method: String, fields: [ProxyHeaderField], minorVersion: Int) -> ResponseFraming {
        let lengths = fields.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        let chunkedUpstream = fields.contains { $0.name.lowercased() == "transfer-encoding" }
        let length =
            !chunkedUpstream && lengths.count == 1 && !lengths[0].isEmpty && lengths[0].utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
            ? lengths[0] : nil
        if method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304 {
            return .none(contentLength: status == 204 ? nil : length)
        }
        if let length { return .length(length) }
        return minorVersion == 1 ? .chunked : .untilClose
    }
}
