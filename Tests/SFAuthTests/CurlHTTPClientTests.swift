import Foundation
import SFAuthCore
import Testing

@testable import SFAuth

/// CurlHTTPClient against a real local server (`Fixtures/http_fixture.py`).
@Suite struct CurlHTTPClientTests {
    let client = CurlHTTPClient()

    // MARK: - Requests and responses

    @Test func postSendsExactBodyAndContentType() async throws {
        try await CurlHTTPFixture.with { fixture in
            let body = "grant_type=authorization_code&code=abc%2Fdef&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcb"
            let response = try await client.send(
                HTTPRequest(
                    method: "POST", url: fixture.url("/echo"),
                    headers: [
                        (name: "Content-Type", value: "application/x-www-form-urlencoded"),
                        (name: "Accept", value: "application/json"),
                    ],
                    body: Array(body.utf8)))
            #expect(response.status == 200)
            #expect(response.mediaType == "application/json")
            let echo = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(response.body))
            #expect(echo.method == "POST")
            #expect(echo.path == "/echo")
            #expect(echo.body == body)
            #expect(echo.values("Content-Type") == ["application/x-www-form-urlencoded"])
            #expect(echo.values("Accept") == ["application/json"])
            #expect(echo.values("Content-Length") == [String(body.utf8.count)])
            #expect(echo.values("User-Agent") == ["sfauth/0.1.0"])
            #expect(echo.values("Expect").isEmpty)
        }
    }

    @Test func bodyWithNULBytesIsSentWhole() async throws {
        try await CurlHTTPFixture.with { fixture in
            let body: [UInt8] = Array("a=1".utf8) + [0] + Array("b=2".utf8)
            let response = try await client.send(HTTPRequest(method: "POST", url: fixture.url("/echo"), body: body))
            let echo = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(response.body))
            #expect(Array(echo.body.utf8) == body)
            #expect(echo.values("Content-Type") == ["application/x-www-form-urlencoded"])
        }
    }

    @Test func otherMethodsAndCustomUserAgent() async throws {
        try await CurlHTTPFixture.with { fixture in
            let client = CurlHTTPClient(options: .init(userAgent: "embedder/2"))
            let put = try await client.send(
                HTTPRequest(method: "PUT", url: fixture.url("/echo?x=1"), body: Array("{}".utf8)))
            let putEcho = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(put.body))
            #expect(putEcho.method == "PUT")
            #expect(putEcho.path == "/echo?x=1")
            #expect(putEcho.body == "{}")
            #expect(putEcho.values("User-Agent") == ["embedder/2"])

            let delete = try await client.send(HTTPRequest(method: "DELETE", url: fixture.url("/echo")))
            let deleteEcho = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(delete.body))
            #expect(deleteEcho.method == "DELETE")
            #expect(deleteEcho.body == "")

            let get = try await client.send(
                HTTPRequest(method: "GET", url: fixture.url("/echo"), headers: [(name: "X-Empty", value: "")]))
            let getEcho = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(get.body))
            #expect(getEcho.method == "GET")
            #expect(getEcho.values("X-Empty") == [""])
            #expect(getEcho.values("Content-Length").isEmpty)

            let head = try await client.send(HTTPRequest(method: "HEAD", url: fixture.url("/headers")))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["x-custom"] == "one")
        }
    }

    @Test func statusHeadersAndBodyComeBack() async throws {
        try await CurlHTTPFixture.with { fixture in
            let response = try await client.send(HTTPRequest(method: "GET", url: fixture.url("/headers")))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json; charset=utf-8")
            #expect(response.mediaType == "application/json")
            #expect(response.headers["x-custom"] == "one")
            #expect(response.headers["x-multi"] == "a, b")
            #expect(response.headers["cache-control"] == "no-store")
            #expect(response.headers["content-length"] == "11")
            #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
            #expect(response.bodyText == #"{"ok":true}"#)
        }
    }

    @Test(arguments: [400, 401, 404, 500, 503])
    func errorStatusesAreResponses(status: Int) async throws {
        try await CurlHTTPFixture.with { fixture in
            let response = try await client.send(
                HTTPRequest(method: "POST", url: fixture.url("/status/\(status)"), body: Array("x=1".utf8)))
            #expect(response.status == status)
            #expect(response.mediaType == "application/json")
            #expect(response.bodyText == #"{"error": "invalid_grant", "error_description": "status \#(status)"}"#)

            let html = try await client.send(HTTPRequest(method: "GET", url: fixture.url("/status/\(status)?type=html")))
            #expect(html.status == status)
            #expect(html.mediaType == "text/html")
            #expect(html.bodyText.contains("<h1>Server Error</h1>"))
        }
    }

    @Test func headersOfAnInterimResponseAreDropped() async throws {
        try await CurlHTTPFixture.with { fixture in
            let response = try await client.send(
                HTTPRequest(
                    method: "POST", url: fixture.url("/continue"),
                    headers: [(name: "Expect", value: "100-continue")], body: Array("hello".utf8)))
            #expect(response.status == 200)
            #expect(response.headers["x-interim"] == nil)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.bodyText == #"{"received": 5}"#)
        }
    }

    @Test(arguments: [false, true])
    func bodyOverTheLimitIsAnError(chunked: Bool) async throws {
        try await CurlHTTPFixture.with { fixture in
            let client = CurlHTTPClient(options: .init(maxResponseBodySize: 100_000))
            let ok = try await client.send(HTTPRequest(method: "GET", url: fixture.url("/big?bytes=100000&chunked=\(chunked ? 1 : 0)")))
            #expect(ok.body.count == 100_000)
            let error = await #expect(throws: HTTPTransportError.self) {
                try await client.send(HTTPRequest(method: "GET", url: fixture.url("/big?bytes=300000&chunked=\(chunked ? 1 : 0)")))
            }
            #expect(error?.kind == .other)
            #expect(error?.message == "request to 127.0.0.1:\(fixture.port) failed: the response body is larger than the 100000-byte limit")
        }
    }

    // MARK: - Transport errors

    @Test func connectionRefusedIsConnect() async throws {
        let port = CurlHTTPFixture.closedPort()
        let error = await #expect(throws: HTTPTransportError.self) {
            try await client.send(HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)/token", body: Array("a=b".utf8)))
        }
        #expect(error?.kind == .connect)
        #expect(error?.message.hasPrefix("could not connect to 127.0.0.1:\(port) (") == true)
        #expect(error?.message.contains("Failed to connect to 127.0.0.1 port \(port)") == true)
        #expect(error?.message.hasSuffix("Connection refused)") == true)
        #expect(error?.message.contains("\n") == false)
    }

    @Test func slowServerTimesOut() async throws {
        try await CurlHTTPFixture.with { fixture in
            let client = CurlHTTPClient(options: .init(totalTimeout: .milliseconds(500)))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: HTTPTransportError.self) {
                try await client.send(HTTPRequest(method: "GET", url: fixture.url("/slow?seconds=30")))
            }
            let elapsed = clock.now - start
            #expect(error?.kind == .timeout)
            #expect(error?.message.hasPrefix("request to 127.0.0.1:\(fixture.port) timed out (") == true)
            // Ended by our timeout, not by the server's answer 30 s later (a loose bound: the machine is shared).
            #expect(elapsed < .seconds(20))
        }
    }

    @Test func cancellationAbortsTheTransferQuickly() async throws {
        try await CurlHTTPFixture.with { fixture in
            let client = self.client
            let url = fixture.url("/slow?seconds=30")
            let task = Task { try await client.send(HTTPRequest(method: "GET", url: url)) }
            try await Task.sleep(for: .milliseconds(300))
            let clock = ContinuousClock()
            let start = clock.now
            task.cancel()
            let result = await task.result
            let elapsed = clock.now - start
            #expect(throws: CancellationError.self) { try result.get() }
            // Ended by the cancellation, not by the server's answer 30 s later (a loose bound: the machine is shared).
            #expect(elapsed < .seconds(20), "cancellation took \(elapsed)")
        }
    }

    @Test func alreadyCancelledTaskDoesNotSend() async throws {
        let port = CurlHTTPFixture.closedPort()
        let client = self.client
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/"))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func selfSignedCertificateIsRejectedAsTLS() async throws {
        try await CurlHTTPFixture.with(tls: true) { fixture in
            let error = await #expect(throws: HTTPTransportError.self) {
                try await client.send(HTTPRequest(method: "POST", url: fixture.url("/echo"), body: Array("secret=1".utf8)))
            }
            #expect(error?.kind == .tls)
            #expect(error?.message.hasPrefix("TLS connection to 127.0.0.1:\(fixture.port) failed (") == true)
            #expect(error?.message.contains("certificate") == true)
        }
    }

    @Test func trustedCABundleMakesTheSameServerWork() async throws {
        try await CurlHTTPFixture.with(tls: true) { fixture in
            let client = CurlHTTPClient(options: .init(caBundlePath: fixture.certificatePath))
            let response = try await client.send(
                HTTPRequest(method: "POST", url: fixture.url("/echo"), body: Array("a=b".utf8)))
            #expect(response.status == 200)
            let echo = try JSONDecoder().decode(CurlHTTPEcho.self, from: Data(response.body))
            #expect(echo.body == "a=b")
        }
    }

    @Test func httpsToAPlainHTTPPortIsTLS() async throws {
        try await CurlHTTPFixture.with { fixture in
            let error = await #expect(throws: HTTPTransportError.self) {
                try await client.send(HTTPRequest(method: "GET", url: "https://127.0.0.1:\(fixture.port)/echo"))
            }
            #expect(error?.kind == .tls)
            #expect(error?.message.hasPrefix("TLS connection to 127.0.0.1:\(fixture.port) failed (") == true)
        }
    }

    @Test func unresolvableHostIsResolve() async throws {
        // RFC 6761: .invalid never resolves (the resolver may still be asked).
        let error = await #expect(throws: HTTPTransportError.self) {
            try await client.send(HTTPRequest(method: "GET", url: "https://sfauth-test.invalid/"))
        }
        #expect(error?.kind == .resolve)
        #expect(error?.message.hasPrefix("could not resolve sfauth-test.invalid:443 (") == true)
    }

    // MARK: - URL policy

    @Test func plainHTTPToARemoteHostIsRefusedWithoutIO() async throws {
        let error = await #expect(throws: HTTPTransportError.self) {
            try await client.send(HTTPRequest(method: "POST", url: "http://example.com/", body: Array("secret=1".utf8)))
        }
        #expect(error?.kind == .insecureURL)
        #expect(
            error?.message
                == "refusing to send POST over plain http to example.com: only https, or http to a loopback address, is allowed")
    }

    @Test(arguments: [
        "http://example.com:80/token", "HTTP://Example.com/", "ftp://127.0.0.1/", "file:///etc/passwd",
        "http://127.0.0.1.example.com/", "http://localhost.example.com/", "http://127.1/", "http://0x7f.0.0.1/",
        "http://0127.0.0.1/", "http://[::ffff:127.0.0.1]/", "http://[::2]/", "http://10.0.0.1/",
        "http://user@evil.example@127.0.0.1/", "http://127.0.0.1 .example.com/", "http://127.0.0.1\\@evil.example/",
        "http://%31%32%37.0.0.1/", "127.0.0.1:80/token", "http://", "http://:80/", "http://127.0.0.1:99999/",
        "http://127.0.0.1:8080\u{0}.evil.example/", "http://localhost./",
    ])
    func urlsRefusedBeforeSending(url: String) async throws {
        let error = await #expect(throws: HTTPTransportError.self) {
            try await client.send(HTTPRequest(method: "GET", url: url))
        }
        #expect(error?.kind == .insecureURL, "\(url): \(error?.message ?? "")")
    }

    @Test(arguments: [
        ("https://login.salesforce.com/services/oauth2/token", true),
        ("https://example.com:8443/x", true),
        ("http://127.0.0.1:8080/cb", true),
        ("http://127.255.3.4/", true),
        ("http://localhost:1717/", true),
        ("http://LOCALHOST/", true),
        ("http://[::1]:8080/", true),
        ("http://[0:0:0:0:0:0:0:1]/", true),
        ("http://example.com/", false),
        ("http://128.0.0.1/", false),
        ("http://[::]/", false),
    ])
    func loopbackPolicy(url: String, allowed: Bool) throws {
        let endpoint = try? HTTPURLPolicy.endpoint(for: url, method: "GET")
        #expect((endpoint != nil) == allowed, "\(url)")
    }

    @Test func loopbackRequestsNeverUseAProxy() async throws {
        let fixture = try CurlHTTPFixture()
        defer { fixture.stop() }
        let port = fixture.port
        let deadProxy = CurlHTTPFixture.closedPort()
        // A child process, so the proxy variables do not leak into other tests.
        await #expect(processExitsWith: .success) { [port = port as Int, deadProxy = deadProxy as Int] in
            for name in ["http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
                setenv(name, "http://127.0.0.1:\(deadProxy)", 1)
            }
            unsetenv("no_proxy")
            unsetenv("NO_PROXY")
            let response = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/headers"))
            if response.status != 200 { exit(2) }
            let viaLocalhost = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: "http://localhost:\(port)/headers"))
            if viaLocalhost.status != 200 { exit(3) }
        }
    }

    // MARK: - Lazy loading

    @Test func libcurlIsLoadedByTheFirstSendOnly() async throws {
        // A fresh process: other tests in this one have loaded libcurl already.
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) {
            if CurlHTTPClient.isLibcurlLoaded { exit(10) }
            let client = CurlHTTPClient()
            if CurlHTTPClient.isLibcurlLoaded { exit(11) }
            // A refused URL is checked without loading libcurl.
            _ = try? await client.send(HTTPRequest(method: "GET", url: "http://example.com/"))
            if CurlHTTPClient.isLibcurlLoaded { exit(12) }

            let port = CurlHTTPFixture.closedPort()
            let request = HTTPRequest(method: "POST", url: "http://127.0.0.1:\(port)/", body: Array("a=b".utf8))
            let clock = ContinuousClock()
            let firstStart = clock.now
            do {
                _ = try await client.send(request)
                exit(13)
            } catch let error as HTTPTransportError where error.kind == .connect {
            } catch {
                exit(15)
            }
            let firstElapsed = clock.now - firstStart
            if !CurlHTTPClient.isLibcurlLoaded { exit(14) }
            let laterStart = clock.now
            for _ in 0..<20 { _ = try? await client.send(request) }
            let laterElapsed = (clock.now - laterStart) / 20
            print("libcurl: \(CurlHTTPClient.libcurlVersion ?? "?"); first send \(firstElapsed), later sends \(laterElapsed) each")
        }
        if let output = result?.standardOutputContent {
            print(String(decoding: output, as: UTF8.self), terminator: "")
        }
    }

    @Test func missingLibcurlIsUnavailable() async throws {
        await #expect(processExitsWith: .success) {
            var options = CurlHTTPClient.Options()
            options.libraryNames = ["libcurl-sfauth-missing.so.4"]
            do {
                _ = try await CurlHTTPClient(options: options).send(HTTPRequest(method: "GET", url: "http://127.0.0.1:9/"))
                exit(20)
            } catch let error as HTTPTransportError {
                if error.kind != .unavailable { exit(21) }
                if !error.message.hasPrefix("libcurl could not be loaded (libcurl-sfauth-missing.so.4") { exit(22) }
                if !error.message.hasSuffix("); install the libcurl4 package") { exit(23) }
                if CurlHTTPClient.isLibcurlLoaded { exit(24) }
            }
        }
    }

    @Test func invalidHeadersAreRejected() async throws {
        try await CurlHTTPFixture.with { fixture in
            for header in [(name: "X-Bad", value: "a\r\nInjected: 1"), (name: "Bad Name", value: "x"), (name: "", value: "x")] {
                let error = await #expect(throws: HTTPTransportError.self) {
                    try await client.send(HTTPRequest(method: "GET", url: fixture.url("/echo"), headers: [header]))
                }
                #expect(error?.kind == .other)
                #expect(error?.message.hasPrefix("request to 127.0.0.1:\(fixture.port) not sent: ") == true)
            }
        }
    }
}
