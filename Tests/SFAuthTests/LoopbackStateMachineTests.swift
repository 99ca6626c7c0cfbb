import SFAuthCore
import Testing

@testable import SFAuth

// The loopback listener's decisions as tables: events in, actions out, time as a number. No socket,
// no thread, no sleep. `LoopbackListenerTests` keeps a few real-socket tests for the poll() loop.

@Suite("LoopbackStateMachine")
struct LoopbackStateMachineTests {
    typealias Machine = LoopbackStateMachine

    static let port: UInt16 = 5555
    static let timedOut = OAuthError.timedOut(seconds: 60, hint: "no redirect")

    static func machine(limits: Machine.Limits = .init(), now: Int64 = 0) -> Machine {
        Machine(
            configuration: .init(
                port: port, callbackPath: "/callback", expectedState: "st",
                timeout: 60_000, timeoutError: timedOut),
            limits: limits, now: now)
    }

    /// A request head as a browser sends it, with the `Host` field given (nil: none).
    static func head(_ target: String, method: String = "GET", host: String? = "127.0.0.1:\(port)", extra: String = "") -> [UInt8] {
        Array("\(method) \(target) HTTP/1.1\r\n\(host.map { "Host: \($0)\r\n" } ?? "")\(extra)User-Agent: test\r\n\r\n".utf8)
    }

    /// Actions in a form a table can hold: `send 1 404`, `hold 1`, `resolve code=c`, `stop timedOut`, …
    static func summary(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .send(let id, let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                let status = text.hasPrefix("HTTP/1.1 ") ? String(text.dropFirst(9).prefix(3)) : "\(bytes.count) bytes"
                return "send \(id) \(status)"
            case .hold(let id): return "hold \(id)"
            case .shutdownWrite(let id): return "shutdownWrite \(id)"
            case .close(let id): return "close \(id)"
            case .resolve(.authorized(let response)): return "resolve code=\(response.code)"
            case .resolve(.denied(let error)): return "resolve error=\(error.code)"
            case .resolve(.rejected(let reason)): return "resolve rejected \(reason)"
            case .stop(nil): return "stop"
            case .stop(.cancelled): return "stop cancelled"
            case .stop(.timedOut): return "stop timedOut"
            case .stop(let error?): return "stop \(error)"
            }
        }
    }

    /// Feeds `events` (each at its time) and returns every action, summarised. A `.send` is
    /// answered at once with `.sent` of all its bytes, as a socket with room does.
    static func run(_ machine: inout Machine, _ events: [(Int64, Machine.Event)], writesComplete: Bool = true) -> [String] {
        var all: [Machine.Action] = []
        for (now, event) in events {
            var pending = machine.handle(event, at: now)
            while !pending.isEmpty {
                let action = pending.removeFirst()
                all.append(action)
                if writesComplete, case .send(let id, let bytes) = action {
                    pending.insert(contentsOf: machine.handle(.sent(id, count: bytes.count), at: now), at: 0)
                }
            }
        }
        return summary(all)
    }

    /// The body of the response a `.send` carries.
    static func body(of actions: [Machine.Action]) -> String? {
        for case .send(_, let bytes) in actions {
            let text = String(decoding: bytes, as: UTF8.self)
            return text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) }
        }
        return nil
    }

    // MARK: The callback

    @Test("the callback with our state is held and resolves the wait; nothing is answered yet")
    func callbackIsHeld() {
        var machine = Self.machine()
        let actions = Self.run(&machine, [(0, .accepted(7)), (5, .received(7, Self.head("/callback?code=c&state=st")))])
        #expect(actions == ["hold 7", "resolve code=c"])
        #expect(machine.interest(of: 7) == .read)  // discarding anything further
        #expect(Self.run(&machine, [(6, .received(7, Array("more".utf8)))]) == [])
        // No deadline while held and nothing else is open: only finish or cancel ends it.
        #expect(machine.nextDeadline(after: 6) == nil)
    }

    @Test("a denied redirect with our state resolves the wait too")
    func deniedResolves() {
        var machine = Self.machine()
        let actions = Self.run(
            &machine,
            [
                (0, .accepted(1)),
                (0, .received(1, Self.head("/callback?error=access_denied&state=st"))),
            ])
        #expect(actions == ["hold 1", "resolve error=access_denied"])
    }

    @Test(
        "a wrong, missing or malformed state gets 400 and the wait goes on; a second callback is refused",
        arguments: ["code=abc&state=wrong", "code=abc", "code=%zz&state=st", "state=st", "code=a&code=b&state=st"])
    func rejectedCallbacks(query: String) {
        var machine = Self.machine()
        #expect(
            Self.run(&machine, [(0, .accepted(1)), (0, .received(1, Self.head("/callback?\(query)")))])
                == ["send 1 400", "shutdownWrite 1"])
        #expect(
            Self.run(&machine, [(0, .accepted(2)), (0, .received(2, Self.head("/callback?code=c&state=st")))])
                == ["hold 2", "resolve code=c"])
        #expect(
            Self.run(&machine, [(0, .accepted(3)), (0, .received(3, Self.head("/callback?code=x&state=st")))])
                == ["send 3 400", "shutdownWrite 3"])
    }

    @Test(
        "404 for the favicon, other paths, near misses, POST and HEAD (no body); 400 for a malformed request line",
        arguments: [
            ("GET", "/favicon.ico", "404"), ("GET", "/", "404"), ("GET", "/callback/", "404"),
            ("GET", "/callbackx?code=c&state=st", "404"), ("GET", "/CALLBACK?code=c&state=st", "404"),
            ("POST", "/callback?code=c&state=st", "404"), ("HEAD", "/callback?code=c&state=st", "404"),
            ("GET", "/sfauth/signed-in", "404"), ("NONSENSE", "", "400"),
        ])
    func otherRequests(method: String, target: String, status: String) {
        var machine = Self.machine()
        let bytes = method == "NONSENSE" ? Array("NONSENSE\r\n\r\n".utf8) : Self.head(target, method: method)
        var actions = machine.handle(.accepted(1), at: 0) + machine.handle(.received(1, bytes), at: 0)
        #expect(Self.summary(actions) == ["send 1 \(status)"])
        if method == "HEAD" { #expect(Self.body(of: actions) == "") }
        guard case .send(_, let response) = actions.first else { return }
        actions = machine.handle(.sent(1, count: response.count), at: 0)
        #expect(Self.summary(actions) == ["shutdownWrite 1"])
        // Draining: what the client still sends is discarded; its end closes the connection.
        #expect(machine.interest(of: 1) == .read)
        #expect(Self.run(&machine, [(1, .received(1, Array("body".utf8))), (2, .peerFinished(1))]) == ["close 1"])
        #expect(machine.connectionIDs.isEmpty && !machine.isStopped)
    }

    // MARK: The Host field

    @Test(
        "requests naming another host are refused on every path, and the wait goes on",
        arguments: ["evil.example:PORT", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:PORT", "", "MISSING", "TWICE"])
    func foreignHost(host: String) {
        var machine = Self.machine()
        let port = Self.port
        for (index, target) in ["/callback?code=c&state=st", "/favicon.ico", "/sfauth/signed-in"].enumerated() {
            let id = Int32(index + 1)
            let head: [UInt8]
            switch host {
            case "MISSING": head = Self.head(target, host: nil)
            case "TWICE": head = Self.head(target, extra: "Host: 127.0.0.1:\(port)\r\n")
            default: head = Self.head(target, host: host.replacing("PORT", with: "\(port)"))
            }
            #expect(
                Self.run(&machine, [(0, .accepted(id)), (0, .received(id, head))]) == ["send \(id) 400", "shutdownWrite \(id)"],
                "\(target) with \(host)")
        }
        #expect(
            Self.run(&machine, [(0, .accepted(9)), (0, .received(9, Self.head("/callback?code=c&state=st", host: "Localhost:\(port)")))])
                == ["hold 9", "resolve code=c"])
    }

    @Test("the listener's own names are accepted", arguments: ["127.0.0.1:5555", "localhost:5555", "[::1]:5555", "LOCALHOST:5555"])
    func ownHost(host: String) {
        var machine = Self.machine()
        #expect(
            Self.run(&machine, [(0, .accepted(1)), (0, .received(1, Self.head("/callback?code=c&state=st", host: host)))])
                == ["hold 1", "resolve code=c"])
    }

    // MARK: Request heads

    @Test("a head split across many reads is assembled")
    func splitHead() {
        var machine = Self.machine()
        var events: [(Int64, Machine.Event)] = [(0, .accepted(1))]
        for piece in ["GET /callback?co", "de=c&state=st HT", "TP/1.1\r\nHost: 127.0.0.1:5555\r", "\n", "\r", "\n"] {
            events.append((20, .received(1, Array(piece.utf8))))
        }
        #expect(Self.run(&machine, events) == ["hold 1", "resolve code=c"])
    }

    @Test("a head over 64 KiB gets 431, with or without its end; 40 KiB of cookies is fine")
    func headSizeLimit() {
        var machine = Self.machine()
        let filler = Array("GET /callback?code=c&state=st HTTP/1.1\r\nX-Filler: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: 70_000)
        #expect(Self.run(&machine, [(0, .accepted(1)), (0, .received(1, filler))]) == ["send 1 431", "shutdownWrite 1"])
        // Arriving in pieces: refused as soon as more than 64 KiB have come without an end.
        let endless = Array("GET /".utf8) + Array(repeating: UInt8(ascii: "b"), count: 4096)
        var actions: [String] = []
        var total = 0
        _ = machine.handle(.accepted(2), at: 0)
        while actions.isEmpty {
            actions = Self.run(&machine, [(0, .received(2, endless))])
            total += endless.count
        }
        #expect(actions == ["send 2 431", "shutdownWrite 2"])
        #expect(total > LoopbackHTTP.maximumHeadSize && total - endless.count <= LoopbackHTTP.maximumHeadSize)

        let cookies = (0..<400).map { "dev_session_\($0)=\(String(repeating: "x", count: 90))" }.joined(separator: "; ")
        let big = Self.head("/callback?code=c&state=st", extra: "Cookie: \(cookies)\r\n")
        #expect(big.count > 40_000)
        #expect(Self.run(&machine, [(0, .accepted(3)), (0, .received(3, big))]) == ["hold 3", "resolve code=c"])
    }

    // MARK: Many connections

    @Test("idle preconnects do not delay the real callback")
    func preconnects() {
        var machine = Self.machine()
        let idle: [(Int64, Machine.Event)] = (1...4).map { (0, .accepted(Int32($0))) }
        #expect(Self.run(&machine, idle) == [])
        // The callback on a fifth connection is answered at once; the idle ones are untouched.
        #expect(
            Self.run(&machine, [(50, .accepted(5)), (50, .received(5, Self.head("/callback?code=abc&state=st")))])
                == ["hold 5", "resolve code=abc"])
        #expect(machine.connectionIDs == [1, 2, 3, 4, 5])
        // They are closed when idle for 10 s.
        #expect(Self.run(&machine, [(9_999, .tick)]) == [])
        #expect(Self.run(&machine, [(10_000, .tick)]) == ["close 1", "close 2", "close 3", "close 4"])
    }

    @Test("more than 32 idle connections: the oldest are closed and the callback still gets through")
    func connectionLimit() {
        var machine = Self.machine()
        let actions = Self.run(&machine, (1...40).map { (0, .accepted(Int32($0))) })
        #expect(actions == (1...8).map { "close \($0)" })
        #expect(machine.connectionIDs == Array(9...40))
        // The callback is the 41st: one more idle connection (the oldest) makes room.
        #expect(
            Self.run(&machine, [(0, .accepted(41)), (0, .received(41, Self.head("/callback?code=abc&state=st")))])
                == ["close 9", "hold 41", "resolve code=abc"])
    }

    @Test("with every connection busy, a new one is closed at once")
    func connectionLimitWithNothingEvictable() {
        var machine = Self.machine(limits: .init(maximumConnections: 1))
        _ = Self.run(&machine, [(0, .accepted(1)), (0, .received(1, Self.head("/callback?code=c&state=st")))])
        #expect(Self.run(&machine, [(0, .accepted(2))]) == ["close 2"])
    }

    @Test("a failed accept sheds the oldest idle connection and pauses accepting for 100 ms")
    func acceptFailure() {
        var machine = Self.machine()
        _ = Self.run(&machine, [(0, .accepted(1)), (0, .accepted(2))])
        #expect(Self.run(&machine, [(1_000, .acceptFailed)]) == ["close 1"])
        #expect(!machine.isAccepting(at: 1_099))
        #expect(machine.nextDeadline(after: 1_000) == 1_100)
        #expect(machine.isAccepting(at: 1_100))
    }

    // MARK: Writing

    @Test("a response the socket takes in parts: the rest when writable, the idle deadline renewed")
    func partialWrites() {
        var machine = Self.machine()
        let actions = machine.handle(.accepted(1), at: 0) + machine.handle(.received(1, Self.head("/favicon.ico")), at: 0)
        guard case .send(1, let response) = actions.first else {
            Issue.record("no send")
            return
        }
        #expect(machine.handle(.sent(1, count: 10), at: 100).isEmpty)
        #expect(machine.interest(of: 1) == .write)
        #expect(machine.nextDeadline(after: 100) == 10_100)
        #expect(machine.handle(.writable(1), at: 200) == [.send(1, response.dropFirst(10))])
        #expect(machine.handle(.sent(1, count: response.count - 10), at: 200) == [.shutdownWrite(1)])
        // Draining for 2 s at most.
        #expect(machine.nextDeadline(after: 200) == 2_200)
        #expect(Self.run(&machine, [(2_200, .tick)]) == ["close 1"])
    }

    @Test("a client that goes away mid-request, or resets, is just closed")
    func clientsThatGoAway() {
        var machine = Self.machine()
        #expect(Self.run(&machine, [(0, .accepted(1)), (0, .received(1, Array("GET /callb".utf8))), (0, .peerFinished(1))]) == ["close 1"])
        #expect(
            Self.run(
                &machine,
                [
                    (0, .accepted(2)), (0, .received(2, Array("GET /callback?code=c&st".utf8))),
                    (0, .peerFailed(2, reset: true)),
                ]) == ["close 2"])
        #expect(
            Self.run(&machine, [(0, .accepted(3)), (0, .received(3, Self.head("/favicon.ico")))], writesComplete: false)
                == ["send 3 404"])
        #expect(Self.run(&machine, [(0, .peerFailed(3, reset: true))]) == ["close 3"])
        #expect(
            Self.run(&machine, [(0, .accepted(4)), (0, .received(4, Self.head("/callback?code=c&state=st")))])
                == ["hold 4", "resolve code=c"])
    }

    // MARK: Finishing

    /// A machine holding the callback on connection 1.
    static func holding(limits: Machine.Limits = .init()) -> Machine {
        var machine = Self.machine(limits: limits)
        _ = Self.run(&machine, [(0, .accepted(1)), (0, .received(1, head("/callback?code=c&state=st")))])
        return machine
    }

    @Test("finish(.signedIn): 303 to the local page, the page served once with the detail escaped, then stop")
    func finishSignedIn() {
        var machine = Self.holding()
        let redirect = machine.handle(.finish(.signedIn(detail: "<alice>")), at: 1_000)
        #expect(Self.summary(redirect) == ["send 1 303"])
        guard case .send(1, let bytes) = redirect.first else { return }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\r\nLocation: /sfauth/signed-in\r\n") && !text.contains("code=c"))
        #expect(Self.summary(machine.handle(.sent(1, count: bytes.count), at: 1_000)) == ["shutdownWrite 1"])

        let page = machine.handle(.accepted(2), at: 1_100) + machine.handle(.received(2, Self.head("/sfauth/signed-in")), at: 1_100)
        #expect(Self.summary(page) == ["send 2 200"])
        #expect(Self.body(of: page)?.contains("&lt;alice&gt;") == true)
        guard case .send(2, let pageBytes) = page.first else { return }
        #expect(Self.summary(machine.handle(.sent(2, count: pageBytes.count), at: 1_100)) == ["shutdownWrite 2", "stop"])
        #expect(machine.isStopped)
        #expect(machine.handle(.tick, at: 99_000).isEmpty)
    }

    @Test("finish(.failed): only the failure page is served")
    func finishFailedServesOnlyItsPage() {
        var machine = Self.holding()
        #expect(Self.run(&machine, [(0, .finish(.failed(message: "no"))), (0, .peerFinished(1))]) == ["send 1 303", "shutdownWrite 1", "close 1"])
        #expect(Self.run(&machine, [(0, .accepted(2)), (0, .received(2, Self.head("/sfauth/signed-in")))]) == ["send 2 404", "shutdownWrite 2"])
        #expect(
            Self.run(&machine, [(0, .accepted(3)), (0, .received(3, Self.head("/sfauth/failed")))]) == ["send 3 200", "shutdownWrite 3", "stop"])
    }

    @Test("the browser never asks for the result page: the redirect drains 2 s, the listener stops after 3 s")
    func finishGracePeriod() {
        var machine = Self.holding()
        #expect(Self.run(&machine, [(10_000, .finish(.failed(message: "denied")))]) == ["send 1 303", "shutdownWrite 1"])
        #expect(Self.run(&machine, [(11_999, .tick)]) == [])
        #expect(Self.run(&machine, [(12_000, .tick)]) == ["close 1"])
        #expect(machine.nextDeadline(after: 12_000) == 13_000)
        #expect(Self.run(&machine, [(12_999, .tick)]) == [])
        #expect(Self.run(&machine, [(13_000, .tick)]) == ["stop"])
    }

    @Test("the tab is closed: a reset during the redirect's drain, or a failed write, stops at once")
    func browserGoneDuringTheRedirect() {
        var reset = Self.holding()
        #expect(
            Self.run(&reset, [(0, .finish(.signedIn(detail: ""))), (5, .peerFailed(1, reset: true))])
                == ["send 1 303", "shutdownWrite 1", "stop"])
        var failedWrite = Self.holding()
        #expect(
            Self.run(&failedWrite, [(0, .finish(.signedIn(detail: ""))), (0, .peerFailed(1, reset: false))], writesComplete: false)
                == ["send 1 303", "stop"])
        var stalled = Self.holding()
        #expect(
            Self.run(&stalled, [(0, .finish(.signedIn(detail: ""))), (0, .sent(1, count: 0)), (10_000, .tick)], writesComplete: false)
                == ["send 1 303", "stop"])
    }

    @Test("finish after the browser left the held connection stops at once")
    func finishAfterBrowserLeft() {
        var machine = Self.holding()
        #expect(Self.run(&machine, [(0, .peerFinished(1))]) == [])
        #expect(machine.interest(of: 1) == .hangUp)  // it may still read our answer
        #expect(Self.run(&machine, [(0, .hungUp(1)), (1, .finish(.signedIn(detail: "")))]) == ["close 1", "stop"])

        var reset = Self.holding()
        #expect(Self.run(&reset, [(0, .peerFailed(1, reset: true)), (1, .finish(.signedIn(detail: "")))]) == ["close 1", "stop"])
    }

    @Test("finish without a callback just stops; a second finish is ignored")
    func finishWithoutCallback() {
        var machine = Self.machine()
        #expect(Self.run(&machine, [(0, .finish(.signedIn(detail: "")))]) == ["stop"])
        var twice = Self.holding()
        #expect(
            Self.run(&twice, [(0, .finish(.signedIn(detail: ""))), (0, .finish(.failed(message: "x")))], writesComplete: false)
                == ["send 1 303"])
    }

    // MARK: Ending without a callback

    @Test("the deadline passes: stop with the timeout error")
    func timeout() {
        var machine = Self.machine(now: 1_000)
        _ = Self.run(&machine, [(1_000, .accepted(1))])
        #expect(machine.nextDeadline(after: 1_000) == 11_000)
        #expect(Self.run(&machine, [(11_000, .tick)]) == ["close 1"])
        #expect(machine.nextDeadline(after: 11_000) == 61_000)
        #expect(Self.run(&machine, [(60_999, .tick)]) == [])
        #expect(machine.handle(.tick, at: 61_000) == [.stop(Self.timedOut)])
    }

    @Test("cancel stops at any stage, and nothing happens afterwards")
    func cancel() {
        var waiting = Self.machine()
        #expect(Self.run(&waiting, [(0, .cancel)]) == ["stop cancelled"])
        #expect(Self.run(&waiting, [(0, .accepted(1)), (0, .received(1, Self.head("/callback?code=c&state=st")))]) == [])
        #expect(!waiting.isAccepting(at: 0))
        var holding = Self.holding()
        #expect(Self.run(&holding, [(0, .cancel)]) == ["stop cancelled"])
        #expect(holding.connectionIDs == [1])  // for the loop to close
    }
}
