import Glibc
import SFAuthCore

/// The server loop of a `LoopbackListener`: one dedicated thread, non-blocking sockets, `poll()`.
/// Everything here is confined to that thread; it talks to callers only through
/// `LoopbackListenerCore`.
final class LoopbackServer {
    /// What the wait is for.
    struct Request: Sendable {
        /// The port the listener is bound to: requests must name it in their `Host` field.
        var port: UInt16
        var callbackPath: String
        var expectedState: String
        var timeoutMilliseconds: Int64
        var timeoutError: OAuthError
    }

    /// Most connections open at once; beyond that the oldest idle one is closed.
    static let maximumConnections = 32
    /// A connection that sends nothing (or reads nothing) for this long is closed.
    static let idleTimeout: Int64 = 10_000
    /// How long a connection may still send after its response before it is closed.
    static let drainTimeout: Int64 = 2_000
    /// How long `finish` waits for the browser to ask for the result page.
    static let finishGracePeriod: Int64 = 3_000

    private final class Connection {
        enum Phase {
            /// Reading the request head.
            case reading
            /// The accepted callback: unanswered until `finish`.
            case held
            /// Writing a response.
            case writing
            /// Response written and write side shut: discarding input until EOF or a deadline.
            case draining
        }

        let fd: Int32
        var phase = Phase.reading
        var input: [UInt8] = []
        var output: [UInt8] = []
        var written = 0
        /// Idle, write or drain deadline (monotonic ms); unused while held.
        var deadline: Int64
        /// The response being written is the result page: closing it ends the listener.
        var isResultPage = false
        /// The response being written is the 303 after the callback.
        var isRedirect = false
        /// The held connection's peer has shut its side (it may still read our answer).
        var peerFinished = false

        init(fd: Int32, now: Int64) {
            self.fd = fd
            self.deadline = now + LoopbackServer.idleTimeout
        }
    }

    private enum Stage {
        /// Waiting for the callback until the deadline.
        case waiting(deadline: Int64)
        /// The callback arrived; its connection is held until `finish`.
        case holding
        /// Redirected; serving `path` once, until `deadline`.
        case finishing(path: String, page: String, deadline: Int64)
    }

    private let request: Request
    private var listeners: [Int32]
    private let wakeFD: Int32
    private let core: LoopbackListenerCore
    private var connections: [Connection] = []
    private var held: Connection?
    private var stage: Stage
    private var acceptPausedUntil: Int64 = 0
    private var scratch = [UInt8](repeating: 0, count: 4096)

    init(request: Request, listeners: [Int32], wakeFD: Int32, core: LoopbackListenerCore) {
        self.request = request
        self.listeners = listeners
        self.wakeFD = wakeFD
        self.core = core
        self.stage = .waiting(deadline: GlibcExtras.monotonicMilliseconds() + request.timeoutMilliseconds)
    }

    /// Runs `run()` on a new detached thread. Returns `false` when no thread could be created.
    func startThread() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let server = Unmanaged<LoopbackServer>.fromOpaque(context!).takeRetainedValue()
            server.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<LoopbackServer>.fromOpaque(context).release()
            errno = result
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Closes the listening sockets and every connection (shut down first: closed for good even if
    /// a child being spawned holds copies of the descriptors, see `LoopbackSockets.shutdownAndClose`).
    func closeAll() {
        for fd in listeners { LoopbackSockets.shutdownAndClose(fd) }
        listeners = []
        for connection in connections { LoopbackSockets.shutdownAndClose(connection.fd) }
        connections = []
        held = nil
    }

    private func end(_ error: OAuthError?) {
        closeAll()
        core.serverEnded(error: error)
    }

    // MARK: - The loop

    private func run() {
        var pollFDs: [pollfd] = []
        while true {
            let commands = core.pendingCommands()
            if commands.cancel { return end(.cancelled) }
            if let page = commands.finish {
                switch stage {
                case .waiting, .holding:
                    if beginFinishing(page) == .stop { return }
                case .finishing:
                    break
                }
            }

            var now = GlibcExtras.monotonicMilliseconds()
            var nextDeadline = Int64.max
            switch stage {
            case .waiting(let deadline):
                if now >= deadline { return end(request.timeoutError) }
                nextDeadline = deadline
            case .holding:
                break
            case .finishing(_, _, let deadline):
                if now >= deadline { return end(nil) }
                nextDeadline = deadline
            }
            for connection in connections where connection.phase != .held {
                if now >= connection.deadline {
                    // A browser that does not take the redirect or the page: nothing left to show.
                    if connection.phase == .writing, connection.isRedirect || connection.isResultPage {
                        return end(nil)
                    }
                    remove(connection)
                } else {
                    nextDeadline = min(nextDeadline, connection.deadline)
                }
            }

            pollFDs.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            let accepting = now >= acceptPausedUntil
            if accepting {
                for fd in listeners { pollFDs.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            } else {
                nextDeadline = min(nextDeadline, acceptPausedUntil)
            }
            let firstConnection = pollFDs.count
            let polled = connections
            for connection in polled {
                var events: Int16 = 0
                switch connection.phase {
                case .reading, .draining: events = Int16(POLLIN)
                case .held: events = connection.peerFinished ? 0 : Int16(POLLIN)
                case .writing: events = Int16(POLLOUT)
                }
                pollFDs.append(pollfd(fd: connection.fd, events: events, revents: 0))
            }

            let timeout: Int32 = nextDeadline == .max ? -1 : Int32(clamping: max(0, nextDeadline - now))
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
            if ready < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return end(.localFault("the listener failed: poll: \(GlibcExtras.errorText(errno))"))
            }
            if ready == 0 { continue }
            now = GlibcExtras.monotonicMilliseconds()

            if pollFDs[0].revents != 0 { drainWakeChannel() }
            if accepting {
                for index in 1..<firstConnection where pollFDs[index].revents != 0 {
                    acceptConnections(pollFDs[index].fd, now: now)
                }
            }
            for (offset, connection) in polled.enumerated() {
                let revents = pollFDs[firstConnection + offset].revents
                guard revents != 0, connection.fd >= 0, isOpen(connection) else { continue }
                if handle(connection, revents: revents, now: now) == .stop { return }
            }
        }
    }

    private enum Next { case proceed, stop }

    private func isOpen(_ connection: Connection) -> Bool {
        connections.contains { $0 === connection }
    }

    private func drainWakeChannel() {
        while recv(wakeFD, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    private func acceptConnections(_ listener: Int32, now: Int64) {
        while true {
            let fd = GlibcExtras.acceptCloseOnExecNonBlocking(listener)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    return
                default:
                    // Out of descriptors or memory: shed an idle connection and pause accepting
                    // briefly rather than spin on a listener that stays readable.
                    if let idle = oldestEvictable() { remove(idle) }
                    acceptPausedUntil = now + 100
                    return
                }
            }
            if connections.count >= Self.maximumConnections {
                if let idle = oldestEvictable() {
                    remove(idle)
                } else {
                    LoopbackSockets.shutdownAndClose(fd)
                    continue
                }
            }
            connections.append(Connection(fd: fd, now: now))
        }
    }

    /// The oldest connection that may be dropped: one that has sent nothing yet (a preconnect),
    /// else the oldest one still reading. Never the held callback or a response in progress.
    private func oldestEvictable() -> Connection? {
        connections.first { $0.phase == .reading && $0.input.isEmpty }
            ?? connections.first { $0.phase == .reading || $0.phase == .draining }
    }

    private func remove(_ connection: Connection) {
        LoopbackSockets.shutdownAndClose(connection.fd)
        connections.removeAll { $0 === connection }
        if held === connection { held = nil }
    }

    private func handle(_ connection: Connection, revents: Int16, now: Int64) -> Next {
        switch connection.phase {
        case .reading:
            return read(connection, now: now)
        case .held:
            if connection.peerFinished, revents & Int16(POLLHUP | POLLERR) != 0 {
                remove(connection)
                return .proceed
            }
            // Discard anything further; note when the browser shuts its side.
            let count = recv(connection.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count == 0 {
                connection.peerFinished = true
            } else if count < 0, errno != EINTR, errno != EAGAIN, errno != EWOULDBLOCK {
                remove(connection)
            }
            return .proceed
        case .writing:
            return write(connection, now: now)
        case .draining:
            while true {
                let count = recv(connection.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
                if count > 0 { continue }
                if count < 0, errno == EINTR { continue }
                if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .proceed }
                if count < 0, errno == ECONNRESET, connection.isRedirect, case .finishing = stage {
                    // The tab was closed before the redirect: no browser will ask for the page.
                    end(nil)
                    return .stop
                }
                remove(connection)
                return .proceed
            }
        }
    }

    private func read(_ connection: Connection, now: Int64) -> Next {
        while true {
            let count = recv(connection.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return .proceed }
                remove(connection)
                return .proceed
            }
            if count == 0 {
                // The client went away mid-request (or never sent one).
                remove(connection)
                return .proceed
            }
            let searchFrom = max(0, connection.input.count - 3)
            connection.input.append(contentsOf: scratch[0..<count])
            connection.deadline = now + Self.idleTimeout
            if let end = LoopbackHTTP.endOfHead(in: connection.input, searchFrom: searchFrom),
               end <= LoopbackHTTP.maximumHeadSize {
                return respond(to: connection, head: connection.input[0..<end], now: now)
            }
            if connection.input.count > LoopbackHTTP.maximumHeadSize {
                let response = LoopbackHTTP.rejected(
                    reason: "the request head is larger than \(LoopbackHTTP.maximumHeadSize / 1024) KiB",
                    status: 431, statusReason: "Request Header Fields Too Large")
                return send(response, on: connection, now: now)
            }
        }
    }

    private func respond(to connection: Connection, head: ArraySlice<UInt8>, now: Int64) -> Next {
        guard let line = LoopbackHTTP.parseRequestLine(head) else {
            return send(LoopbackHTTP.rejected(reason: "the request is not a valid HTTP/1.1 request"),
                        on: connection, now: now)
        }
        // On every path, the result pages included: a page of another origin that reaches this port
        // under another name (DNS rebinding) is not the browser coming back from the server.
        guard LoopbackHTTP.isOwnHost(line.host, port: request.port) else {
            return send(LoopbackHTTP.rejected(reason: "the request is not addressed to this sign-in's listener (Host header)"),
                        on: connection, now: now)
        }
        let isGET = line.method == "GET"
        if isGET, line.path == request.callbackPath {
            switch stage {
            case .waiting:
                let outcome = CallbackOutcome(query: line.query, expectedState: request.expectedState)
                if case .rejected(let reason) = outcome {
                    return send(LoopbackHTTP.rejected(reason: reason), on: connection, now: now)
                }
                connection.phase = .held
                connection.input = []
                held = connection
                stage = .holding
                core.resolveWait(outcome)
                return .proceed
            case .holding, .finishing:
                return send(LoopbackHTTP.rejected(reason: "this login has already received its redirect"),
                            on: connection, now: now)
            }
        }
        if isGET, case .finishing(let path, let page, _) = stage, line.path == path {
            connection.isResultPage = true
            return send(LoopbackHTTP.response(status: 200, reason: "OK", body: page), on: connection, now: now)
        }
        return send(LoopbackHTTP.notFound(includeBody: line.method != "HEAD"), on: connection, now: now)
    }

    /// Starts the redirect of the held callback. When there is nothing to answer (no callback
    /// held, or its connection is gone) the listener just closes and this returns `.stop`.
    private func beginFinishing(_ page: LoopbackListener.ResultPage) -> Next {
        guard let connection = held, isOpen(connection) else {
            end(nil)
            return .stop
        }
        let path: String, body: String
        switch page {
        case .signedIn(let detail):
            path = LoopbackHTTP.signedInPath
            body = LoopbackHTTP.signedInPage(detail: detail)
        case .failed(let message):
            path = LoopbackHTTP.failedPath
            body = LoopbackHTTP.failedPage(message: message)
        }
        let now = GlibcExtras.monotonicMilliseconds()
        stage = .finishing(path: path, page: body, deadline: now + Self.finishGracePeriod)
        held = nil
        connection.isRedirect = true
        return send(LoopbackHTTP.redirect(to: path), on: connection, now: now)
    }

    private func send(_ response: [UInt8], on connection: Connection, now: Int64) -> Next {
        connection.phase = .writing
        connection.input = []
        connection.output = response
        connection.written = 0
        connection.deadline = now + Self.idleTimeout
        return write(connection, now: now)
    }

    private func write(_ connection: Connection, now: Int64) -> Next {
        while connection.written < connection.output.count {
            let count = connection.output.withUnsafeBytes { bytes in
                Glibc.send(connection.fd, bytes.baseAddress! + connection.written,
                           bytes.count - connection.written, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    connection.deadline = now + Self.idleTimeout
                    return .proceed
                }
                // The browser went away: for the redirect or the result page there is nothing
                // left to show, so the listener is done.
                if connection.isRedirect || connection.isResultPage {
                    end(nil)
                    return .stop
                }
                remove(connection)
                return .proceed
            }
            connection.written += count
        }
        // Complete. Shut our side so the client sees the end, then discard what it still sends
        // (closing with unread input would reset the connection and could lose the response).
        shutdown(connection.fd, Int32(SHUT_WR))
        connection.output = []
        if connection.isResultPage {
            while recv(connection.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
            end(nil)
            return .stop
        }
        connection.phase = .draining
        connection.deadline = now + Self.drainTimeout
        return .proceed
    }
}
