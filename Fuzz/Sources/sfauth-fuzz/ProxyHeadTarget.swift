import SFAuth

/// What a client sends to `sfauth proxy` (`SFAuthCore/Proxy`): the request head parsed, checked by
/// the forwarding rules over TCP and over a Unix socket, its body framing, the fields that would be
/// forwarded, and the response framing — with the invariants that make it safe: a request let
/// through has an origin-form target that passes the path check again, and no forwarded field is
/// the client's `Authorization`, `Host` or a hop-by-hop field.
///
/// Input: the bytes of a head (up to the empty line). The text is also read as a `/proc/net/tcp`
/// table, an upstream URL and a `--listen` value.
@Sendable func fuzzProxyHead(_ data: UnsafeRawBufferPointer) {
    let text = FuzzInput.text(data)
    if let head = try? ProxyRequestHead.parse(Array(data)) {
        for authorities in [ProxyRules.acceptedAuthorities(port: 8080), nil] {
            if let target = try? ProxyRules.check(head, authorities: authorities) {
                precondition(target.hasPrefix("/"), "ProxyRules.check let through a target that is not origin-form: \(target)")
                let path = String(target.prefix(while: { $0 != "?" }))
                precondition((try? ProxyRules.checkPath(path)) != nil, "ProxyRules.check let through a path checkPath refuses: \(path)")
            }
        }
        _ = try? head.bodyFraming()
        _ = head.keepsAlive
        _ = head.expectsContinue
        let never: Set<String> = [
            "authorization", "host", "connection", "transfer-encoding", "content-length", "upgrade", "te", "proxy-authorization",
        ]
        for field in ProxyRules.forwardedRequestFields(head) {
            precondition(!never.contains(field.name.lowercased()), "ProxyRules forwarded \(field.name)")
        }
        let fields = head.headers
        _ = ProxyRules.forwardedResponseFields(fields)
        for status in [200, 204, 304, 401] {
            _ = ProxyRules.responseFraming(status: status, method: head.method, fields: fields, minorVersion: head.minorVersion)
        }
    }
    let loopback = ProcNetTCP.Endpoint(address: [127, 0, 0, 1], port: 8080)
    _ = ProcNetTCP.owner(local: loopback, remote: loopback, in: text)
    if let upstream = try? ProxyUpstream(parsing: text) { _ = upstream.url(for: "/x") }
    _ = try? ProxyListenAddress.parse(text)
    _ = try? ByteSize.parse(text, option: "--max-replay-body")
}
