import Foundation
import Glibc
import SFAuthCore
import Testing

@testable import SFAuth

// Real sockets over loopback: a tiny blocking HTTP client plays the browser. These test the poll()
// loop (`LoopbackServer`) end to end; the decisions themselves — every status, limit and timeout —
// are tabled without sockets in `LoopbackStateMachineTests`. Instead of sleeping until the server
// thread is surely polling, a test makes a request and waits for its answer (`ready`).

@Suite("LoopbackListener")
struct LoopbackListenerTests {
    // MARK: Binding

    @Test("an ephemeral port is bound on 127.0.0.1 only and named in the redirect URI")
    func ephemeralPort() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        #expect(listener.port != 0)
        #expect(listener.redirectURI == "http://127.0.0.1:\(listener.port)/callback")
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == 0)
        // 127.0.0.2 is loopback too: answered only if we had bound the wildcard address.
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.2", port: listener.port) == ECONNREFUSED)
        // No socket on ::1 either. (Not checked by connecting: ports are per address, so another
        // test's listener may hold [::1] with the same port number.)
        #expect(listener.boundAddresses == ["127.0.0.1:\(listener.port)"])
    }

    @Test("a fixed port is bound; a second listener on it fails with a typed port-in-use error and a clear message")
    func fixedPortInUse() async throws {
        let port = try LoopbackTestClient.freePort()
        let first = try LoopbackListener(configuration: .init(port: port, callbackPath: "/OauthRedirect"))
        defer { first.cancel() }
        #expect(first.port == port)
        #expect(first.redirectURI == "http://127.0.0.1:\(port)/OauthRedirect")
        // This process holds it, and /proc lookups skip our own pid: no holder is named.
        let error = #expect(throws: OAuthError.portInUse(port: port, address: "127.0.0.1", heldBy: nil)) {
            _ = try LoopbackListener(configuration: .init(port: port))
        }
        #expect(
            error?.description == "Configuration error: port \(port) on 127.0.0.1 is already in use. "
                + "Stop the program that holds it, or sign in on another port (registering that redirect URI where the server matches it exactly).")
        #expect(error?.recovery == .fixConfiguration)
        // Once the first one is closed the port can be bound again at once (SO_REUSEADDR).
        first.cancel()
        let again = try LoopbackListener(configuration: .init(port: port))
        again.cancel()
    }

    @Test("localhost binds 127.0.0.1 and ::1 on the same port")
    func localhostBindsBoth() async throws {
        let listener = try LoopbackListener(configuration: .init(host: "localhost"))
        defer { listener.cancel() }
        #expect(listener.redirectURI == "http://localhost:\(listener.port)/callback")
        #expect(listener.boundAddresses == ["127.0.0.1:\(listener.port)", "[::1]:\(listener.port)"])
        let wait = Task { try await listener.waitForCallback(expectedState: "s", timeout: .seconds(10)) }
        for host in ["127.0.0.1", "::1"] {
            let response = try await LoopbackTestClient.get("/favicon.ico", host: host, port: listener.port)
            #expect(response.status == 404, "via \(host)")
        }
        listener.cancel()
        await #expect(throws: OAuthError.cancelled) { try await wait.value }
    }

    @Test("[::1] binds ::1 only")
    func ipv6Only() async throws {
        let listener = try LoopbackListener(configuration: .init(host: "[::1]"))
        defer { listener.cancel() }
        #expect(listener.redirectURI == "http://[::1]:\(listener.port)/callback")
        #expect(LoopbackTestClient.connectErrno(host: "::1", port: listener.port) == 0)
        // Not checked by connecting to 127.0.0.1: another test's listener may hold that port number there.
        #expect(listener.boundAddresses == ["[::1]:\(listener.port)"])
    }

    @Test("hosts that are not loopback and bad callback paths are configuration errors")
    func badConfiguration() {
        for host in ["0.0.0.0", "example.com", "", "::"] {
            #expect(throws: OAuthError.self, "host \(host)") {
                _ = try LoopbackListener(configuration: .init(host: host))
            }
        }
        for path in ["callback", "/a?b", "/a#b", "/a b"] {
            #expect(throws: OAuthError.self, "path \(path)") {
                _ = try LoopbackListener(configuration: .init(callbackPath: path))
            }
        }
    }

    // MARK: Requests

    @Test("404 for the favicon, other paths, near-miss paths, POST and HEAD; every response has the security headers")
    func notFound() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "right", timeout: .seconds(20)) }
        let port = listener.port
        let requests = [
            "GET /favicon.ico HTTP/1.1", "GET / HTTP/1.1", "GET /callback/ HTTP/1.1",
            "GET /callbackx?code=c&state=right HTTP/1.1", "GET /CALLBACK?code=c&state=right HTTP/1.1",
            "POST /callback?code=c&state=right HTTP/1.1", "HEAD /callback?code=c&state=right HTTP/1.1",
            "GET /sfauth/signed-in HTTP/1.1",
        ]
        for line in requests {
            let response = try await LoopbackTestClient.exchange("\(line)\r\nHost: 127.0.0.1:\(port)\r\n\r\n", port: port)
            #expect(response.status == 404, "\(line)")
            #expect(response.header("Connection") == "close")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Content-Type") == "text/html; charset=utf-8")
            #expect(response.header("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'")
            #expect(response.header("Referrer-Policy") == "no-referrer")
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            #expect(Int(response.header("Content-Length") ?? "") == CallbackPages.notFound.utf8.count)
            #expect(response.body.isEmpty == line.hasPrefix("HEAD"), "\(line)")
        }
        // A POST with a body is answered and the body discarded.
        let post = try await LoopbackTestClient.exchange(
            "POST /callback HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: 11\r\n\r\ncode=x&y=1\n", port: port)
        #expect(post.status == 404)
        // Malformed request lines get 400.
        let malformed = try await LoopbackTestClient.exchange("NONSENSE\r\n\r\n", port: port)
        #expect(malformed.status == 400)

        // None of that ended the wait.
        _ = try await LoopbackTestClient.sendHeld("/callback?code=c&state=right", port: port)
        let outcome = try await wait.value
        #expect(outcome == .authorized(AuthorizationResponse(code: "c", state: "right")))
    }

    @Test("idle preconnect sockets do not delay the real callback")
    func idlePreconnects() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "right", timeout: .seconds(20)) }
        // Like Chromium: a few sockets opened ahead and never used.
        let idle = try (0..<4).map { _ in try LoopbackTestClient(host: "127.0.0.1", port: listener.port) }
        try await ready(listener)  // a later connection answered: the idle ones were accepted before it
        let clock = ContinuousClock()
        let started = clock.now
        let held = try await LoopbackTestClient.sendHeld("/callback?code=abc&state=right", port: listener.port)
        let outcome = try await wait.value
        let elapsed = clock.now - started
        #expect(outcome == .authorized(AuthorizationResponse(code: "abc", state: "right")))
        // A server that served connections one after another would wait for the idle ones until
        // their 10 s timeout; the margin is for a loaded machine.
        #expect(elapsed < .seconds(2), "callback took \(elapsed)")
        let finish = Task { await listener.finish(.signedIn(detail: "x")) }
        let redirect = try await held.response()
        #expect(redirect.status == 303)
        _ = try await LoopbackTestClient.get(redirect.header("Location") ?? "", port: listener.port)
        await finish.value
        _ = idle
    }

    @Test("more than 32 idle connections: the oldest are closed and the callback still gets through")
    func connectionLimit() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "right", timeout: .seconds(20)) }
        let idle = try (0..<40).map { _ in try LoopbackTestClient(host: "127.0.0.1", port: listener.port) }
        _ = try await LoopbackTestClient.sendHeld("/callback?code=abc&state=right", port: listener.port)
        #expect(try await wait.value == .authorized(AuthorizationResponse(code: "abc", state: "right")))
        // The oldest idle ones were closed by the listener (EOF) before the callback was read; the
        // newest are still open. (Which ones exactly: `LoopbackStateMachineTests.connectionLimit`.)
        #expect(try await LoopbackTestClient.blocking { idle[0].isClosedByPeer(waitMilliseconds: 2000) })
        let closedCount = idle.filter { $0.isClosedByPeer(waitMilliseconds: 0) }.count
        #expect(closedCount >= 8 && closedCount <= 10, "closed: \(closedCount)")
    }

    @Test("a wrong or missing state gets 400 and the wait goes on; then the right one returns the decoded code")
    func wrongStateThenRight() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "right", timeout: .seconds(20)) }
        for query in ["code=abc&state=wrong", "code=abc", "code=%zz&state=right", "state=right", "code=a&code=b&state=right"] {
            let response = try await LoopbackTestClient.get("/callback?\(query)", port: listener.port)
            #expect(response.status == 400, "\(query)")
            #expect(response.body.contains("does not belong to the login in progress"), "\(query)")
        }
        let wrong = try await LoopbackTestClient.get("/callback?code=abc&state=wrong", port: listener.port)
        #expect(wrong.body.contains("the &#39;state&#39; parameter does not match this login"))

        _ = try await LoopbackTestClient.sendHeld("/callback?code=abc%3D%3D&state=right&iss=https%3A%2F%2Fas", port: listener.port)
        let outcome = try await wait.value
        #expect(outcome == .authorized(AuthorizationResponse(code: "abc==", state: "right", issuer: "https://as")))
        // A second callback after the first is not taken.
        let again = try await LoopbackTestClient.get("/callback?code=other&state=right", port: listener.port)
        #expect(again.status == 400)
    }

    @Test("error=access_denied with our state returns .denied")
    func denied() async throws {
        // The grace period shortened from 3 s to 0.3 s (the state machine tables the real one).
        let listener = try LoopbackListener(
            configuration: .init(callbackPath: "/OauthRedirect"),
            limits: .init(drainTimeout: 200, finishGracePeriod: 300))
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "right", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld(
            "/OauthRedirect?error=access_denied&error_description=end-user+denied%20authorization&state=right",
            port: listener.port)
        let outcome = try await wait.value
        #expect(outcome == .denied(OAuthServerError(code: "access_denied", description: "end-user denied authorization")))

        // The browser never asks for the result page: finish gives up after the grace period.
        let clock = ContinuousClock()
        let started = clock.now
        await listener.finish(.failed(message: "denied"))
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(250) && elapsed < .seconds(3), "finish took \(elapsed)")
        let redirect = try await held.response()
        #expect(redirect.status == 303)
        #expect(redirect.header("Location") == "/sfauth/failed")
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == ECONNREFUSED)
    }

    // MARK: Finish

    @Test("finish(.signedIn): 303 to a local page, the page with the detail escaped, then the port closes")
    func finishSignedIn() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let port = listener.port
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld("/callback?code=secret-code&state=st", port: port)
        _ = try await wait.value

        // Held: no answer before finish.
        #expect(try await LoopbackTestClient.blocking { held.hasData(waitMilliseconds: 200) } == false)

        let clock = ContinuousClock()
        let started = clock.now
        let finish = Task { await listener.finish(.signedIn(detail: "<alice & \"bob\" 'o'>@example.com")) }
        let redirect = try await held.response()
        #expect(redirect.status == 303)
        let location = try #require(redirect.header("Location"))
        #expect(location == "/sfauth/signed-in")
        #expect(redirect.header("Cache-Control") == "no-store")
        #expect(redirect.header("Referrer-Policy") == "no-referrer")
        #expect(!redirect.raw.contains("secret-code"))

        let page = try await LoopbackTestClient.get(location, port: port)
        #expect(page.status == 200)
        #expect(page.header("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'")
        #expect(page.body.contains("You are signed in"))
        #expect(page.body.contains("&lt;alice &amp; &quot;bob&quot; &#39;o&#39;&gt;@example.com"))
        #expect(!page.body.contains("<alice"))
        #expect(!page.body.contains("{{"))
        #expect(Int(page.header("Content-Length") ?? "") == page.body.utf8.count)

        await finish.value
        let elapsed = clock.now - started
        #expect(elapsed < .seconds(2), "finish took \(elapsed): it should end once the page is served")
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
    }

    @Test("finish(.failed): 303 to the failure page showing the message escaped")
    func finishFailed() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld("/callback?code=c&state=st", port: listener.port)
        _ = try await wait.value
        let finish = Task { await listener.finish(.failed(message: "invalid_grant: <b>expired</b>")) }
        let redirect = try await held.response()
        #expect(redirect.header("Location") == "/sfauth/failed")
        // Only the page chosen by finish is served.
        let other = try await LoopbackTestClient.get("/sfauth/signed-in", port: listener.port)
        #expect(other.status == 404)
        let page = try await LoopbackTestClient.get("/sfauth/failed", port: listener.port)
        #expect(page.status == 200)
        #expect(page.body.contains("Sign-in failed"))
        #expect(page.body.contains("invalid_grant: &lt;b&gt;expired&lt;/b&gt;"))
        #expect(page.body.contains("terminal"))
        await finish.value
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == ECONNREFUSED)
    }

    @Test("finish when the browser has already closed the held connection returns promptly")
    func finishAfterBrowserLeft() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld("/callback?code=c&state=st", port: listener.port)
        _ = try await wait.value
        held.resetAndClose()
        let clock = ContinuousClock()
        let started = clock.now
        await listener.finish(.signedIn(detail: ""))
        #expect(clock.now - started < .seconds(4))
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == ECONNREFUSED)
    }

    // MARK: Ending without a callback

    @Test("the deadline passes: .timedOut with a hint naming the redirect URI, and the port is closed")
    func timeout() async throws {
        let listener = try LoopbackListener()
        let port = listener.port
        let idle = try LoopbackTestClient(host: "127.0.0.1", port: port)
        defer { idle.close() }
        do {
            _ = try await listener.waitForCallback(expectedState: "s", timeout: .milliseconds(300))
            Issue.record("waitForCallback returned")
        } catch .timedOut(let seconds, let hint) {
            #expect(seconds == 0)
            #expect(
                hint
                    == Problem(
                        "No redirect arrived. If the browser showed an error from the server — an unknown client id, or a redirect URI "
                            + "that is not registered — check the client id, or make sure the client accepts 127.0.0.1 redirects on any port (RFC 8252 §7.3); "
                            + "otherwise sign in again.",
                        remedy: .chooseCallbackPort))
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
        #expect(try await LoopbackTestClient.blocking { idle.isClosedByPeer(waitMilliseconds: 1000) })
    }

    @Test("task cancellation: .cancelled and the port is closed")
    func taskCancellation() async throws {
        let listener = try LoopbackListener()
        let port = listener.port
        let wait = Task { try await listener.waitForCallback(expectedState: "s", timeout: .seconds(30)) }
        try await ready(listener)
        wait.cancel()
        await #expect(throws: OAuthError.cancelled) { try await wait.value }
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
    }

    @Test("a task already cancelled does not start waiting")
    func alreadyCancelled() async throws {
        let listener = try LoopbackListener()
        let port = listener.port
        let wait = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await listener.waitForCallback(expectedState: "s", timeout: .seconds(30))
        }
        await #expect(throws: OAuthError.cancelled) { try await wait.value }
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
    }

    @Test("the port closes and the held connection ends even while a child being spawned holds copies of the sockets")
    func closedDespiteCopiesInAChild() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let port = listener.port
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld("/callback?code=c&state=st", port: port)
        _ = try await wait.value
        // A child that another thread is spawning holds a copy of every descriptor until its exec
        // (close-on-exec acts only then). Copies made here stand in for it.
        let copies = LoopbackTestClient.copiesOfSockets(localPort: port)
        defer { for fd in copies { close(fd) } }
        #expect(copies.count == 2, "the listening socket and the held connection")
        listener.cancel()
        await listener.finish(.signedIn(detail: ""))  // returns once everything is closed
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
        #expect(try await LoopbackTestClient.blocking { held.isClosedByPeer(waitMilliseconds: 2000) })
    }

    @Test("cancel() from another thread: .cancelled and the port is closed; cancel is idempotent")
    func cancelFromAnotherThread() async throws {
        let listener = try LoopbackListener()
        let port = listener.port
        let wait = Task { try await listener.waitForCallback(expectedState: "s", timeout: .seconds(30)) }
        try await ready(listener)
        Thread.detachNewThread {
            listener.cancel()
            listener.cancel()
        }
        await #expect(throws: OAuthError.cancelled) { try await wait.value }
        listener.cancel()
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: port) == ECONNREFUSED)
        await listener.finish(.signedIn(detail: ""))  // returns at once once closed
    }

    @Test("cancel() before waiting closes at once; waiting afterwards throws .cancelled")
    func cancelBeforeWaiting() async throws {
        let listener = try LoopbackListener()
        listener.cancel()
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == ECONNREFUSED)
        await #expect(throws: OAuthError.cancelled) {
            _ = try await listener.waitForCallback(expectedState: "s", timeout: .seconds(5))
        }
    }

    @Test("cancel() while a callback is held closes the held connection")
    func cancelWhileHolding() async throws {
        let listener = try LoopbackListener()
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let held = try await LoopbackTestClient.sendHeld("/callback?code=c&state=st", port: listener.port)
        _ = try await wait.value
        listener.cancel()
        #expect(try await LoopbackTestClient.blocking { held.isClosedByPeer(waitMilliseconds: 2000) })
        #expect(LoopbackTestClient.connectErrno(host: "127.0.0.1", port: listener.port) == ECONNREFUSED)
    }

    @Test("waitForCallback may be called only once")
    func waitTwice() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let first = Task { try await listener.waitForCallback(expectedState: "s", timeout: .seconds(20)) }
        try await ready(listener)
        await #expect(throws: OAuthError.self) {
            _ = try await listener.waitForCallback(expectedState: "s", timeout: .seconds(1))
        }
        listener.cancel()
        await #expect(throws: OAuthError.cancelled) { try await first.value }
    }

    // MARK: Hostile or broken clients

    @Test("an oversized request head gets 431 and the listener keeps working")
    func oversizedHead() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let huge = "GET /callback?code=c&state=st HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 70_000)
        let response = try await LoopbackTestClient.exchange(huge, port: listener.port, halfClose: false)
        #expect(response.status == 431)
        let endless = "GET /" + String(repeating: "b", count: 80_000)
        let response2 = try await LoopbackTestClient.exchange(endless, port: listener.port, halfClose: false)
        #expect(response2.status == 431)
        _ = try await LoopbackTestClient.sendHeld("/callback?code=c&state=st", port: listener.port)
        #expect(try await wait.value == .authorized(AuthorizationResponse(code: "c", state: "st")))
    }

    @Test("a redirect carrying 40 KiB of other local servers' cookies is accepted")
    func largeCookieHeader() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let cookies = (0..<400).map { "dev_session_\($0)=\(String(repeating: "x", count: 90))" }.joined(separator: "; ")
        let client = try LoopbackTestClient(host: "127.0.0.1", port: listener.port)
        defer { client.close() }
        try client.write("GET /callback?code=c&state=st HTTP/1.1\r\nHost: 127.0.0.1:\(listener.port)\r\nCookie: \(cookies)\r\n\r\n")
        #expect(cookies.utf8.count > 40_000)
        #expect(try await wait.value == .authorized(AuthorizationResponse(code: "c", state: "st")))
    }

    @Test(
        "requests naming another host are refused on every path, and the wait goes on",
        arguments: ["evil.example:PORT", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:PORT", "", "MISSING", "TWICE"])
    func foreignHostIsRefused(host: String) async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let port = listener.port
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        let field: String
        switch host {
        case "MISSING": field = ""
        case "TWICE": field = "Host: 127.0.0.1:\(port)\r\nHost: 127.0.0.1:\(port)\r\n"
        default: field = "Host: \(host.replacing("PORT", with: "\(port)"))\r\n"
        }
        for target in ["/callback?code=c&state=st", "/favicon.ico", "/sfauth/signed-in"] {
            let response = try await LoopbackTestClient.exchange("GET \(target) HTTP/1.1\r\n\(field)\r\n", port: port)
            #expect(response.status == 400, "\(target) with \(host)")
        }
        // The login goes on: the real redirect, named as the browser names it, still arrives.
        let client = try LoopbackTestClient(host: "127.0.0.1", port: port)
        defer { client.close() }
        try client.write("GET /callback?code=c&state=st HTTP/1.1\r\nHost: Localhost:\(port)\r\n\r\n")
        #expect(try await wait.value == .authorized(AuthorizationResponse(code: "c", state: "st")))
    }

    @Test("clients that close or reset mid-request do no harm")
    func clientsThatGoAway() async throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let wait = Task { try await listener.waitForCallback(expectedState: "st", timeout: .seconds(20)) }
        for _ in 0..<3 {
            let closing = try LoopbackTestClient(host: "127.0.0.1", port: listener.port)
            try closing.write("GET /callb")
            closing.close()
            let resetting = try LoopbackTestClient(host: "127.0.0.1", port: listener.port)
            try resetting.write("GET /callback?code=c&st")
            resetting.resetAndClose()
            // Sends a request and leaves without reading the answer.
            let leaving = try LoopbackTestClient(host: "127.0.0.1", port: listener.port)
            try leaving.write("GET /favicon.ico HTTP/1.1\r\n\r\n")
            leaving.resetAndClose()
        }
        // A request split in small pieces is assembled.
        let slow = try LoopbackTestClient(host: "127.0.0.1", port: listener.port)
        for piece in ["GET /callback?co", "de=c&state=st HT", "TP/1.1\r\nHost: 127.0.0.1:\(listener.port)\r", "\n\r\n"] {
            try slow.write(piece)  // may arrive in one read or several: the tables cover each split
        }
        #expect(try await wait.value == .authorized(AuthorizationResponse(code: "c", state: "st")))
    }
}

/// Returns once the listener's server thread answers a request: its wait has started and it is polling.
func ready(_ listener: LoopbackListener) async throws {
    let response = try await LoopbackTestClient.get("/favicon.ico", port: listener.port)
    #expect(response.status == 404)
}

// MARK: - A raw-socket HTTP client

/// One TCP connection to the listener, with blocking calls (run them through `blocking`).
final class LoopbackTestClient: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A parsed response.
    struct Response: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: String
        var raw: String

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    private(set) var fd: Int32

    init(host: String, port: UInt16) throws {
        fd = -1
        let (fd, code) = Self.connect(host: host, port: port)
        guard fd >= 0 else { throw Failure(description: "connect \(host):\(port): \(String(cString: strerror(code)))") }
        self.fd = fd
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Closes with a TCP reset (SO_LINGER 0), like a browser tab killed mid-request.
    func resetAndClose() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    func write(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            bytes = bytes.dropFirst(count)
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads until EOF and parses the response.
    func readResponse(timeoutMilliseconds: Int = 5000) throws -> Response {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        while true {
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, remaining) > 0 else {
                throw Failure(description: "no complete response within \(timeoutMilliseconds) ms; got \(data.count) bytes")
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 {
                data += buffer[0..<count]
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, data.isEmpty { throw Failure(description: "recv: \(String(cString: strerror(errno)))") }
            break
        }
        let raw = String(decoding: data, as: UTF8.self)
        guard let split = raw.range(of: "\r\n\r\n") else { throw Failure(description: "no response head in \(raw.debugDescription)") }
        let lines = raw[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, statusParts[0] == "HTTP/1.1", let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines[0].debugDescription)")
        }
        let headers = lines.dropFirst().map { line -> (name: String, value: String) in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: String(raw[split.upperBound...]), raw: raw)
    }

    /// Reads and discards the response in the background of `blocking`.
    func response() async throws -> Response {
        try await Self.blocking { try self.readResponse() }
    }

    /// Whether data (or EOF) arrives within the time.
    func hasData(waitMilliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, waitMilliseconds) > 0
    }

    /// Whether the listener closed this connection (EOF or reset) within the time.
    func isClosedByPeer(waitMilliseconds: Int32) -> Bool {
        guard hasData(waitMilliseconds: waitMilliseconds) else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
        return count <= 0
    }

    // MARK: One-shot helpers

    /// Connects, sends `request`, shuts the write side (unless told not to), reads the response.
    static func exchange(_ request: String, host: String = "127.0.0.1", port: UInt16, halfClose: Bool = false) async throws -> Response {
        try await blocking {
            let client = try LoopbackTestClient(host: host, port: port)
            defer { client.close() }
            try client.write(request)
            if halfClose { client.shutdownWrite() }
            return try client.readResponse()
        }
    }

    /// `GET target` and the response.
    static func get(_ target: String, host: String = "127.0.0.1", port: UInt16) async throws -> Response {
        try await exchange(
            "GET \(target) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\nAccept: text/html\r\n\r\n",
            host: host, port: port)
    }

    /// Sends `GET target` and returns the open connection (the listener holds the callback).
    static func sendHeld(_ target: String, port: UInt16) async throws -> LoopbackTestClient {
        let client = try LoopbackTestClient(host: "127.0.0.1", port: port)
        try client.write("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: test\r\n\r\n")
        return client
    }

    /// 0 when a connection to `host:port` succeeds (it is closed again), else the `errno`.
    static func connectErrno(host: String, port: UInt16) -> Int32 {
        let (fd, code) = connect(host: host, port: port)
        if fd >= 0 {
            Glibc.close(fd)
            return 0
        }
        return code
    }

    /// Copies (`dup`) of this process's descriptors for the IPv4 TCP sockets whose local port is
    /// `port` (listening or connected), found through /proc/net/tcp and /proc/self/fd.
    static func copiesOfSockets(localPort port: UInt16) -> [Int32] {
        // Read to the end: /proc/net/tcp comes one page per read, and String(contentsOfFile:) may stop early.
        let file = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { return [] }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(file, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        Glibc.close(file)
        let table = String(decoding: bytes, as: UTF8.self)
        var inodes = Set<UInt64>()
        for line in table.split(separator: "\n").dropFirst() {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            let fields = line.split(separator: " ")
            guard fields.count > 9, let local = fields[1].split(separator: ":").last,
                UInt16(local, radix: 16) == port, let inode = UInt64(fields[9]), inode != 0
            else { continue }
            inodes.insert(inode)
        }
        // Found first, copied afterwards: a copy could take the number of an entry not yet looked at.
        var found: [(fd: Int32, inode: UInt64)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            guard let fd = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
                target.hasPrefix("socket:["), let inode = UInt64(target.dropFirst(8).dropLast()),
                inodes.remove(inode) != nil
            else { continue }
            found.append((fd, inode))
        }
        var copies: [Int32] = []
        for (fd, inode) in found {
            let copy = dup(fd)
            guard copy >= 0 else { continue }
            // The number may have been closed and reused meanwhile: keep only a copy of that socket.
            var info = stat()
            if fstat(copy, &info) == 0, UInt64(info.st_ino) == inode {
                copies.append(copy)
            } else {
                Glibc.close(copy)
            }
        }
        return copies
    }

    /// A port that was free a moment ago.
    static func freePort() throws -> UInt16 {
        let probe = try LoopbackListener()
        defer { probe.cancel() }
        return probe.port
    }

    /// Runs blocking work on its own thread, off Swift's cooperative pool.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    private static func connect(host: String, port: UInt16) -> (fd: Int32, errno: Int32) {
        let isIPv6 = host.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return (-1, errno) }
        let result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            return (-1, code)
        }
        return (fd, 0)
    }
}
