import Testing

@testable import SFAuthCore

/// The proxy's pure decisions: what it parses, forwards and refuses, without a socket.
@Suite struct ProxyRulesTests {
    let authorities = ProxyRules.acceptedAuthorities(port: 8080)

    func head(_ text: String) throws -> ProxyRequestHead {
        try ProxyRequestHead.parse(Array(text.utf8))
    }

    func refusal(_ text: String, authorities: [String]? = ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"]) -> ProxyRefusal? {
        do {
            _ = try ProxyRules.check(try ProxyRequestHead.parse(Array(text.utf8)), authorities: authorities)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Parsing

    @Test func parsesARequestHead() throws {
        let parsed = try head("POST /v1/chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length:  12 \r\nX-Empty:\r\n")
        #expect(parsed.method == "POST" && parsed.target == "/v1/chat?x=1" && parsed.minorVersion == 1)
        #expect(
            parsed.headers == [
                .init(name: "Host", value: "127.0.0.1:8080"), .init(name: "Content-Length", value: "12"), .init(name: "X-Empty", value: ""),
            ])
        #expect(try parsed.bodyFraming() == .length(12))
        #expect(parsed.keepsAlive)
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\rX: y\r\n", 400),  // bare CR
        ("GET  / HTTP/1.1\r\n", 400),  // two spaces
        ("GET / HTTP/2.0\r\n", 505),
        ("G@T / HTTP/1.1\r\n", 400),
        ("GET / HTTP/1.1\r\nX : y\r\n", 400),  // space before the colon
        ("GET / HTTP/1.1\r\nX: y\r\n folded\r\n", 400),
        ("GET / HTTP/1.1\r\nX: a\u{01}b\r\n", 400),
        ("GET / HTTP/1.1\r\nno colon\r\n", 400),
        ("", 400),
    ])
    func refusesMalformedHeads(text: String, status: Int) {
        #expect(throws: ProxyRefusal.self) { try ProxyRequestHead.parse(Array(text.utf8)) }
        #expect((try? ProxyRequestHead.parse(Array(text.utf8))) == nil)
        do { _ = try ProxyRequestHead.parse(Array(text.utf8)) } catch { #expect(error.status == status) }
    }

    @Test func bodyFramingRefusesSmugglingShapes() throws {
        #expect(try head("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n").bodyFraming() == .chunked)
        #expect(try head("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n").bodyFraming() == .length(5))
        #expect(try head("GET / HTTP/1.1\r\n").bodyFraming() == .none)
        for bad in [
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n",
        ] {
            #expect(throws: ProxyRefusal.self, "\(bad)") { try head(bad).bodyFraming() }
        }
        #expect(throws: ProxyRefusal(501, "only the chunked transfer coding is supported")) {
            try head("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n").bodyFraming()
        }
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        #expect(!(try head("GET / HTTP/1.1\r\nConnection: close\r\n").keepsAlive))
        #expect(!(try head("GET / HTTP/1.0\r\n").keepsAlive))
        #expect(try head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n").keepsAlive)
        #expect(try head("PUT / HTTP/1.1\r\nExpect: 100-continue\r\n").expectsContinue)
    }

    // MARK: - Refusals

    @Test func forwardsOriginFormFromItsOwnClients() {
        #expect(refusal("GET /v1/models?a=b HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n") == nil)
        #expect(refusal("GET / HTTP/1.1\r\nHost: LOCALHOST:8080\r\nSec-Fetch-Site: none\r\n") == nil)
        #expect(refusal("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: http://127.0.0.1:8080\r\n") == nil)
        #expect(refusal("GET / HTTP/1.0\r\n") == nil)  // HTTP/1.0 may leave out Host; no browser does
        #expect(refusal("GET /x HTTP/1.1\r\nHost: anything\r\n", authorities: nil) == nil)  // Unix socket
    }

    @Test func refusesOtherOriginsAndConnect() throws {
        #expect(refusal("CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n")?.status == 405)
        #expect(refusal("GET http://evil.example/x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")?.status == 400)
        #expect(refusal("GET https://127.0.0.1:8080/x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")?.status == 400)
        #expect(refusal("GET evil.example:80 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")?.status == 400)
        #expect(refusal("OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")?.status == 400)
        // Absolute-form naming the proxy itself is its own origin-form request.
        #expect(
            try ProxyRules.check(try head("GET http://127.0.0.1:8080/x?y HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), authorities: authorities) == "/x?y")
        #expect(try ProxyRules.check(try head("GET http://127.0.0.1:8080 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), authorities: authorities) == "/")
    }

    @Test(arguments: [
        "/../etc", "/v1/..", "/./x", "/%2e%2e/x", "/%2E%2e/x", "/.%2e/x", "/%2e/x", "/a/%2fb", "/a/%5Cb", "/a\\..\\b", "/a/%zz",
        "/a/%2", "/a/%00",
    ])
    func refusesPathsThatCouldClimbOut(path: String) {
        #expect(refusal("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n")?.status == 400, "\(path)")
    }

    @Test(arguments: ["/", "/a/b", "/a//b", "/a/..b", "/a/b..", "/.well-known/x", "/a/%41?x=/../y", "/a/%2E%2E%2E"])
    func acceptsOrdinaryPaths(path: String) {
        #expect(refusal("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n") == nil, "\(path)")
    }

    @Test func refusesWhatABrowserWouldSend() {
        // DNS rebinding: a page at evil.example:8080 whose name now points to 127.0.0.1.
        #expect(refusal("GET / HTTP/1.1\r\nHost: evil.example:8080\r\n")?.status == 403)
        #expect(refusal("GET / HTTP/1.1\r\nHost: 127.0.0.1:9999\r\n")?.status == 403)
        #expect(refusal("POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: https://evil.example\r\n")?.status == 403)
        #expect(refusal("POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nOrigin: null\r\n")?.status == 403)
        #expect(refusal("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nSec-Fetch-Site: cross-site\r\n")?.status == 403)
        #expect(refusal("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nSec-Fetch-Site: same-site\r\n")?.status == 403)
        #expect(refusal("GET / HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n", authorities: nil)?.status == 403)
        #expect(refusal("GET / HTTP/1.1\r\n")?.status == 400)  // no Host
        #expect(refusal("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nHost: evil.example\r\n")?.status == 400)
    }

    // MARK: - Header fields

    @Test func requestFieldsLoseHopByHopAndTheClientsAuthorization() throws {
        let parsed = try head(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer client-key\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\n"
                + "Keep-Alive: 5\r\nTE: trailers\r\nTrailer: X\r\nUpgrade: websocket\r\nProxy-Authorization: Basic x\r\n"
                + "Proxy-Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\nContent-Type: text/plain\r\nX-Keep: yes\r\n")
        #expect(ProxyRules.forwardedRequestFields(parsed) == [.init(name: "Content-Type", value: "text/plain"), .init(name: "X-Keep", value: "yes")])
    }

    @Test func responseFieldsLoseHopByHopAndLength() {
        let fields: [ProxyHeaderField] = [
            .init(name: "content-type", value: "text/event-stream"), .init(name: "Connection", value: "close, X-Secret-Hop"),
            .init(name: "x-secret-hop", value: "1"), .init(name: "Transfer-Encoding", value: "chunked"), .init(name: "Content-Length", value: "3"),
            .init(name: "WWW-Authenticate", value: "Bearer"),
        ]
        #expect(ProxyRules.forwardedResponseFields(fields) == [fields[0], fields[5]])
    }

    @Test func responseFramingKeepsLengthsAndChunksTheRest() {
        let length: [ProxyHeaderField] = [.init(name: "Content-Length", value: "42")]
        #expect(ProxyRules.responseFraming(status: 200, method: "GET", fields: length, minorVersion: 1) == .length("42"))
        #expect(ProxyRules.responseFraming(status: 200, method: "GET", fields: [], minorVersion: 1) == .chunked)
        #expect(ProxyRules.responseFraming(status: 200, method: "GET", fields: [], minorVersion: 0) == .untilClose)
        #expect(ProxyRules.responseFraming(status: 200, method: "HEAD", fields: length, minorVersion: 1) == .none(contentLength: "42"))
        #expect(ProxyRules.responseFraming(status: 204, method: "GET", fields: length, minorVersion: 1) == .none(contentLength: nil))
        #expect(ProxyRules.responseFraming(status: 304, method: "GET", fields: [], minorVersion: 1) == .none(contentLength: nil))
        let both: [ProxyHeaderField] = length + [.init(name: "Transfer-Encoding", value: "chunked")]
        #expect(ProxyRules.responseFraming(status: 200, method: "GET", fields: both, minorVersion: 1) == .chunked)
    }

    // MARK: - Upstream and listen address

    @Test func upstreamKeepsItsBasePath() throws {
        let upstream = try ProxyUpstream(parsing: "https://API.example/v1/")
        #expect(upstream.origin == "https://api.example" && upstream.basePath == "/v1")
        #expect(upstream.url(for: "/chat/completions?stream=1") == "https://api.example/v1/chat/completions?stream=1")
        #expect(try ProxyUpstream(parsing: "http://127.0.0.1:8080").url(for: "/") == "http://127.0.0.1:8080/")
        #expect(try ProxyUpstream(parsing: "http://[::1]:9/a").url(for: "/b") == "http://[::1]:9/a/b")
    }

    @Test(arguments: [
        "http://api.example/v1", "ftp://api.example", "api.example", "https://user:pw@api.example", "https://api.example/?q=1",
        "https://api.example/#x", "https://api.example/a/../b", "https://", "https://api example",
    ])
    func upstreamRefusals(url: String) {
        #expect(throws: OAuthError.self, "\(url)") { try ProxyUpstream(parsing: url) }
    }

    @Test func listenOnlyOnLoopback() throws {
        #expect(try ProxyListenAddress.parse("127.0.0.1:8080") == .tcp(host: "127.0.0.1", port: 8080))
        #expect(try ProxyListenAddress.parse("127.0.0.1") == .tcp(host: "127.0.0.1", port: 0))
        #expect(try ProxyListenAddress.parse("[::1]:9") == .tcp(host: "[::1]", port: 9))
        #expect(try ProxyListenAddress.parse("::1") == .tcp(host: "[::1]", port: 0))
        #expect(try ProxyListenAddress.parse("localhost:0") == .tcp(host: "localhost", port: 0))
        for bad in ["0.0.0.0:8080", "[::]:8080", ":8080", "192.168.1.10:8080", "example.com:80", "127.0.0.1:65536", "127.0.0.1:x", "[::1"] {
            #expect(throws: OAuthError.self, "\(bad)") { try ProxyListenAddress.parse(bad) }
        }
    }

    @Test func byteSizes() throws {
        #expect(try ByteSize.parse("1048576", option: "--x") == 1 << 20)
        #expect(try ByteSize.parse("512KiB", option: "--x") == 512 << 10)
        #expect(try ByteSize.parse("1M", option: "--x") == 1 << 20)
        #expect(try ByteSize.parse("0", option: "--x") == 0)
        #expect(try ByteSize.parse("1GiB", option: "--x") == 1 << 30)
        for bad in ["", "-1", "1.5M", "2GiB", "1MB", "lots", "99999999999"] {
            #expect(throws: OAuthError.self, "\(bad)") { try ByteSize.parse(bad, option: "--x") }
        }
    }

    // MARK: - /proc/net/tcp

    /// Rows in the kernel's format, as captured here from a client and a server on 127.0.0.1 and on ::1
    /// (ports and uids changed: the client rows say uid 1000–1002, the proxy's 0), some trimmed after the inode.
    let tcp = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41001 1 0000000000000000 100 0 0 10 0
           1: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 41002 1 0000000000000000 20 4 30 10 -1
           2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 41003 1 0000000000000000 20 4 30 10 -1
        """
    let tcp6 = """
          sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 00000000000000000000000001000000:1F91 00000000000000000000000001000000:B2C4 01 00000000:00000000 00:00000000 00000000     0        0 51002 1
           1: 00000000000000000000000001000000:B2C4 00000000000000000000000001000000:1F91 01 00000000:00000000 00:00000000 00000000  1001        0 51003 1
           2: 0000000000000000FFFF00000100007F:C350 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1002        0 51004 1
        """

    @Test func procNetTCPFindsTheClientsOwner() throws {
        let proxy = ProcNetTCP.Endpoint(address: [127, 0, 0, 1], port: 8080)
        let client = ProcNetTCP.Endpoint(address: [127, 0, 0, 1], port: 0xD431)
        #expect(ProcNetTCP.endpoint("0100007F:1F90") == proxy)
        // The client's row (local = client, remote = proxy) says uid 1000: not ours, refused.
        #expect(ProcNetTCP.owner(local: client, remote: proxy, in: tcp) == 1000)
        // The proxy's own row is the mirror image, with the proxy's uid.
        #expect(ProcNetTCP.owner(local: proxy, remote: client, in: tcp) == 0)
        #expect(ProcNetTCP.owner(local: ProcNetTCP.Endpoint(address: [127, 0, 0, 1], port: 1), remote: proxy, in: tcp) == nil)
        // IPv6 loopback.
        let v6 = [UInt8](repeating: 0, count: 15) + [1]
        #expect(ProcNetTCP.owner(local: .init(address: v6, port: 0xB2C4), remote: .init(address: v6, port: 0x1F91), in: tcp6) == 1001)
        // A client on an IPv6 socket connected to 127.0.0.1 is listed in tcp6 as ::ffff:127.0.0.1.
        #expect(ProcNetTCP.owner(local: .init(address: [127, 0, 0, 1], port: 0xC350), remote: proxy, in: tcp6) == 1002)
        #expect(ProcNetTCP.endpoint("0100007F") == nil && ProcNetTCP.endpoint("XX00007F:1F90") == nil && ProcNetTCP.endpoint("0100007F:1F9") == nil)
    }
}
