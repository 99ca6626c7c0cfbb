import SFAuthCore

/// Every decision of the loopback listener, with no sockets, no clock and no sleeping: events go in
/// (a connection accepted, bytes received, a socket writable, the peer finished, time passed), and
/// actions come out (send bytes, hold, close, resolve the wait, stop). `LoopbackServer` is the thin
/// `poll()` loop that does the I/O the actions ask for and turns what the sockets report into events.
///
/// Time is a value: every event carries `now`, milliseconds on a monotonic clock, and the loop asks
/// ``nextDeadline`` how long it may sleep in `poll()`. So the whole protocol — the Host check, the
/// 64 KiB head limit, concurrent preconnects, the timeouts — is tested as tables of events and
/// actions (`LoopbackStateMachineTests`), without a socket or a sleep. The events, actions and
/// settings are declared in `LoopbackStateMachine+Events.swift`.
struct LoopbackStateMachine {
    /// Identifies a connection; the loop uses the socket's descriptor (unique while it is open).
    typealias ConnectionID = Int32
    /// Milliseconds on a monotonic clock.
    typealias Milliseconds = Int64

    private enum Stage {
        /// Waiting for the callback until the deadline.
        case waiting(deadline: Milliseconds)
        /// The callback arrived; its connection is held until `finish`.
        case holding
        /// Redirected; serving `path` once, until `deadline`.
        case finishing(path: String, page: String, deadline: Milliseconds)
        /// Everything is closed.
        case stopped
    }

    let configuration: Configuration
    let limits: Limits
    private var stage: Stage
    /// Open connections, oldest first.
    private var connections: [LoopbackConnection] = []
    private var held: ConnectionID?
    private var acceptPausedUntil: Milliseconds = .min

    /// Starts waiting at `now`.
    init(configuration: Configuration, limits: Limits = Limits(), now: Milliseconds) {
        self.configuration = configuration
        self.limits = limits
        stage = .waiting(deadline: now + configuration.timeout)
    }

    // MARK: - What the loop asks

    /// The open connections, oldest first.
    var connectionIDs: [ConnectionID] { connections.map(\.id) }

    /// Whether the listener has stopped (after a `.stop` action).
    var isStopped: Bool {
        if case .stopped = stage { return true }
        return false
    }

    /// What to wait for on `id`; `nil` when it is not open.
    func interest(of id: ConnectionID) -> Interest? {
        connections.first { $0.id == id }?.interest
    }

    /// Whether to accept new connections at `now` (paused briefly after `.acceptFailed`).
    func isAccepting(at now: Milliseconds) -> Bool {
        !isStopped && now >= acceptPausedUntil
    }

    /// The earliest moment a `.tick` has something to do; `nil` when only an event can change anything.
    func nextDeadline(after now: Milliseconds) -> Milliseconds? {
        var next: Milliseconds?
        func consider(_ deadline: Milliseconds) { next = min(next ?? deadline, deadline) }
        switch stage {
        case .waiting(let deadline), .finishing(_, _, let deadline): consider(deadline)
        case .holding: break
        case .stopped: return nil
        }
        for connection in connections where connection.phase != .held { consider(connection.deadline) }
        if now < acceptPausedUntil { consider(acceptPausedUntil) }
        return next
    }

    // MARK: - Events

    /// Takes one event at `now` and returns what the loop must do. After `.stop` every event
    /// returns nothing.
    mutating func handle(_ event: Event, at now: Milliseconds) -> [Action] {
        if isStopped { return [] }
        switch event {
        case .accepted(let id): return accepted(id, now: now)
        case .acceptFailed: return acceptFailed(now: now)
        case .received(let id, let bytes): return received(bytes, on: id, now: now)
        case .sent(let id, let count): return sent(count, on: id, now: now)
        case .writable(let id): return writable(id, now: now)
        case .peerFinished(let id): return peerFinished(id)
        case .peerFailed(let id, let reset): return peerFailed(id, reset: reset)
        case .hungUp(let id): return hungUp(id)
        case .finish(let page): return finish(page, now: now)
        case .cancel: return stop(.cancelled)
        case .tick: return tick(now: now)
        }
    }

    private mutating func accepted(_ id: ConnectionID, now: Milliseconds) -> [Action] {
        var actions: [Action] = []
        if connections.count >= limits.maximumConnections {
            guard let evicted = oldestEvictable() else { return [.close(id)] }
            actions.append(remove(evicted))
        }
        connections.append(LoopbackConnection(id: id, deadline: now + limits.idleTimeout))
        return actions
    }

    /// Out of descriptors or memory: shed an idle connection and pause accepting briefly rather
    /// than spin on a listening socket that stays readable.
    private mutating func acceptFailed(now: Milliseconds) -> [Action] {
        acceptPausedUntil = now + limits.acceptPause
        return oldestEvictable().map { [remove($0)] } ?? []
    }

    private mutating func received(_ bytes: [UInt8], on id: ConnectionID, now: Milliseconds) -> [Action] {
        guard let index = index(of: id) else { return [] }
        switch connections[index].phase {
        case .reading:
            let searchFrom = max(0, connections[index].input.count - 3)
            connections[index].input.append(contentsOf: bytes)
            connections[index].deadline = now + limits.idleTimeout
            let input = connections[index].input
            if let end = LoopbackHTTP.endOfHead(in: input, searchFrom: searchFrom), end <= LoopbackHTTP.maximumHeadSize {
                return respond(to: id, head: input[0..<end], now: now)
            }
            if input.count > LoopbackHTTP.maximumHeadSize {
                let response = LoopbackHTTP.rejected(
                    reason: "the request head is larger than \(LoopbackHTTP.maximumHeadSize / 1024) KiB",
                    status: 431, statusReason: "Request Header Fields Too Large")
                return send(response, on: id, now: now)
            }
            return []
        case .held, .writing, .draining:
            // Anything after the request (or after our answer) is discarded.
            return []
        }
    }

    private mutating func sent(_ count: Int, on id: ConnectionID, now: Milliseconds) -> [Action] {
        guard let index = index(of: id), connections[index].phase == .writing else { return [] }
        connections[index].written += count
        guard connections[index].written >= connections[index].output.count else {
            // The socket's buffer is full: wait until it is writable, and give the reader time.
            connections[index].deadline = now + limits.idleTimeout
            return []
        }
        connections[index].output = []
        connections[index].written = 0
        if connections[index].purpose == .resultPage {
            // The page is out: nothing is left to show, so the listener is done.
            return [.shutdownWrite(id)] + stop(nil)
        }
        connections[index].phase = .draining
        connections[index].deadline = now + limits.drainTimeout
        return [.shutdownWrite(id)]
    }

    private mutating func writable(_ id: ConnectionID, now: Milliseconds) -> [Action] {
        guard let connection = connections.first(where: { $0.id == id }), connection.phase == .writing else { return [] }
        return [.send(id, connection.output[connection.written...])]
    }

    private mutating func peerFinished(_ id: ConnectionID) -> [Action] {
        guard let index = index(of: id) else { return [] }
        switch connections[index].phase {
        case .held:
            // The browser may still read our answer: keep the connection until finish or hang-up.
            connections[index].peerFinished = true
            return []
        case .reading, .draining, .writing:
            // Gone mid-request (or never sent one), or done reading our answer.
            return [remove(id)]
        }
    }

    private mutating func peerFailed(_ id: ConnectionID, reset: Bool) -> [Action] {
        guard let index = index(of: id) else { return [] }
        let connection = connections[index]
        switch connection.phase {
        case .writing where connection.purpose != .other:
            // The browser went away during the redirect or the result page: nothing left to show.
            return stop(nil)
        case .draining where reset && connection.purpose == .redirect && isFinishing:
            // The tab was closed before it followed the redirect: no browser will ask for the page.
            return stop(nil)
        default:
            return [remove(id)]
        }
    }

    /// Only polled for on a held connection whose browser shut its side: it is gone for good.
    private mutating func hungUp(_ id: ConnectionID) -> [Action] {
        guard index(of: id) != nil else { return [] }
        return [remove(id)]
    }

    private mutating func tick(now: Milliseconds) -> [Action] {
        switch stage {
        case .waiting(let deadline) where now >= deadline:
            return stop(configuration.timeoutError)
        case .finishing(_, _, let deadline) where now >= deadline:
            return stop(nil)
        default:
            break
        }
        var actions: [Action] = []
        for connection in connections where connection.phase != .held && now >= connection.deadline {
            // A browser that does not take the redirect or the page: nothing left to show.
            if connection.phase == .writing, connection.purpose != .other { return actions + stop(nil) }
            actions.append(remove(connection.id))
        }
        return actions
    }

    // MARK: - Helpers

    private var isFinishing: Bool {
        if case .finishing = stage { return true }
        return false
    }

    private mutating func stop(_ error: OAuthError?) -> [Action] {
        stage = .stopped
        return [.stop(error)]
    }

    private func index(of id: ConnectionID) -> Int? {
        connections.firstIndex { $0.id == id }
    }

    /// The oldest connection that may be dropped: one that has sent nothing yet (a preconnect),
    /// else the oldest one still reading or draining. Never the held callback or a response in progress.
    private func oldestEvictable() -> ConnectionID? {
        (connections.first { $0.phase == .reading && $0.input.isEmpty }
            ?? connections.first { $0.phase == .reading || $0.phase == .draining })?.id
    }

    private mutating func remove(_ id: ConnectionID) -> Action {
        connections.removeAll { $0.id == id }
        if held == id { held = nil }
        return .close(id)
    }

    /// Starts writing `response` on `id`.
    private mutating func send(
        _ response: [UInt8], on id: ConnectionID, now: Milliseconds,
        purpose: LoopbackConnection.Purpose = .other
    ) -> [Action] {
        guard let index = index(of: id) else { return [] }
        connections[index].phase = .writing
        connections[index].input = []
        connections[index].output = response
        connections[index].written = 0
        connections[index].purpose = purpose
        connections[index].deadline = now + limits.idleTimeout
        return [.send(id, response[...])]
    }

    // MARK: - Requests

    /// Answers a complete request head.
    private mutating func respond(to id: ConnectionID, head: ArraySlice<UInt8>, now: Milliseconds) -> [Action] {
        guard let line = LoopbackHTTP.parseRequestLine(head) else {
            return send(LoopbackHTTP.rejected(reason: "the request is not a valid HTTP/1.1 request"), on: id, now: now)
        }
        // On every path, the result pages included: a page of another origin that reaches this port
        // under another name (DNS rebinding) is not the browser coming back from the server.
        guard LoopbackHTTP.isOwnHost(line.host, port: configuration.port) else {
            return send(
                LoopbackHTTP.rejected(reason: "the request is not addressed to this sign-in's listener (Host header)"),
                on: id, now: now)
        }
        let isGET = line.method == "GET"
        if isGET, line.path == configuration.callbackPath {
            guard case .waiting = stage else {
                return send(LoopbackHTTP.rejected(reason: "this login has already received its redirect"), on: id, now: now)
            }
            let outcome = CallbackOutcome(query: line.query, expectedState: configuration.expectedState)
            if case .rejected(let reason) = outcome {
                return send(LoopbackHTTP.rejected(reason: reason), on: id, now: now)
            }
            guard let index = index(of: id) else { return [] }
            connections[index].phase = .held
            connections[index].input = []
            held = id
            stage = .holding
            return [.hold(id), .resolve(outcome)]
        }
        if isGET, case .finishing(let path, let page, _) = stage, line.path == path {
            return send(LoopbackHTTP.response(status: 200, reason: "OK", body: page), on: id, now: now, purpose: .resultPage)
        }
        return send(LoopbackHTTP.notFound(includeBody: line.method != "HEAD"), on: id, now: now)
    }

    /// Starts the redirect of the held callback. With nothing to answer (no callback held, or its
    /// connection is gone) the listener just stops.
    private mutating func finish(_ page: LoopbackListener.ResultPage, now: Milliseconds) -> [Action] {
        switch stage {
        case .waiting, .holding: break
        case .finishing, .stopped: return []
        }
        guard let id = held else { return stop(nil) }
        let path: String
        let body: String
        switch page {
        case .signedIn(let detail):
            path = LoopbackHTTP.signedInPath(for: configuration.app)
            body = LoopbackHTTP.signedInPage(detail: detail, app: configuration.app)
        case .failed(let message):
            path = LoopbackHTTP.failedPath(for: configuration.app)
            body = LoopbackHTTP.failedPage(message: message, app: configuration.app)
        }
        stage = .finishing(path: path, page: body, deadline: now + limits.finishGracePeriod)
        held = nil
        return send(LoopbackHTTP.redirect(to: path), on: id, now: now, purpose: .redirect)
    }
}
