import Glibc
import SFAuthCore
import Synchronization

/// The state a `LoopbackListener` shares between the callers (any thread or task) and its server
/// thread. The server thread owns the sockets once it runs; callers leave it a command (cancel, or
/// the result page to show) and wake its `poll()` through a socket pair — nothing polls a flag.
///
/// It is an object of its own, not part of `LoopbackListener`, because the server thread holds it
/// for as long as it runs: were that the listener, a caller that drops its listener mid-wait would
/// never see it released, and the listener's `deinit` — which cancels and closes everything — would
/// never run. The listener is the caller's handle; this is what the handle and the thread share.
final class LoopbackListenerCore: Sendable {
    private enum Phase {
        /// Bound, no server thread yet: the sockets belong to this object.
        case bound
        /// The server thread owns the sockets.
        case running
        /// Everything is closed.
        case closed
    }

    private struct State {
        var phase = Phase.bound
        var listeners: [Int32]
        var wakeRead: Int32
        var wakeWrite: Int32
        var waitStarted = false
        var cancelRequested = false
        var finishRequest: LoopbackListener.ResultPage?
        var waiter: CheckedContinuation<CallbackOutcome, any Error>?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []

        mutating func closeDescriptors() {
            for fd in listeners { LoopbackSockets.shutdownAndClose(fd) }
            listeners = []
            if wakeRead >= 0 { close(wakeRead) }
            if wakeWrite >= 0 { close(wakeWrite) }
            wakeRead = -1
            wakeWrite = -1
            phase = .closed
        }
    }

    private let state: Mutex<State>

    /// Takes ownership of the listening sockets and creates the wake-up channel.
    init(listeners: [Int32]) throws(OAuthError) {
        // A non-blocking, close-on-exec socket pair wakes the server thread (a self-pipe that needs
        // no GNU-only call).
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &pair) == 0 else {
            throw .localFault("cannot create the listener's wake-up channel: \(GlibcExtras.errorText(errno))")
        }
        state = Mutex(State(listeners: listeners, wakeRead: pair[0], wakeWrite: pair[1]))
    }

    /// Starts the server thread for `configuration`; `continuation` is resumed with the outcome or error.
    func start(
        _ configuration: LoopbackStateMachine.Configuration, limits: LoopbackStateMachine.Limits,
        continuation: CheckedContinuation<CallbackOutcome, any Error>
    ) {
        enum Action {
            case fail(OAuthError)
            case run(listeners: [Int32], wake: Int32)
        }
        let action: Action = state.withLock { state in
            if state.waitStarted {
                return .fail(.configuration("waitForCallback may be called only once per listener"))
            }
            state.waitStarted = true
            guard state.phase == .bound else { return .fail(.cancelled) }
            state.phase = .running
            state.waiter = continuation
            return .run(listeners: state.listeners, wake: state.wakeRead)
        }
        switch action {
        case .fail(let error):
            continuation.resume(throwing: error)
        case .run(let listeners, let wake):
            let server = LoopbackServer(configuration, limits: limits, listeners: listeners, wakeFD: wake, core: self)
            do {
                try DetachedThread.start { server.run() }
            } catch {
                // The server never ran, so the listening sockets are still only ours to close.
                for fd in listeners { LoopbackSockets.shutdownAndClose(fd) }
                serverEnded(error: .localFault("cannot start the listener thread: \(error)"))
            }
        }
    }

    /// Asks for the result page and registers `continuation` to be resumed once all is closed.
    func finish(_ page: LoopbackListener.ResultPage, continuation: CheckedContinuation<Void, Never>) {
        let resumeNow: Bool = state.withLock { state in
            switch state.phase {
            case .bound:
                state.closeDescriptors()
                return true
            case .running:
                if state.finishRequest == nil { state.finishRequest = page }
                state.closeWaiters.append(continuation)
                Self.wake(state.wakeWrite)
                return false
            case .closed:
                return true
            }
        }
        if resumeNow { continuation.resume() }
    }

    /// Closes at once (before the thread runs) or tells the thread to close everything.
    func cancel() {
        state.withLock { state in
            switch state.phase {
            case .bound:
                state.closeDescriptors()
            case .running:
                state.cancelRequested = true
                Self.wake(state.wakeWrite)
            case .closed:
                break
            }
        }
    }

    /// The local addresses of the listening sockets, e.g. `["127.0.0.1:54321"]`, while they are
    /// still bound and no wait has started (for tests); `nil` afterwards.
    func boundAddresses() -> [String]? {
        state.withLock { state in
            state.phase == .bound ? state.listeners.map(LoopbackSockets.localAddress) : nil
        }
    }

    /// What the callers asked for since the thread last looked; the result page is handed over
    /// once, cancellation every time (it ends the thread anyway).
    func takeCommands() -> (cancel: Bool, finish: LoopbackListener.ResultPage?) {
        state.withLock { state in
            defer { state.finishRequest = nil }
            return (state.cancelRequested, state.finishRequest)
        }
    }

    /// Called by the server thread with the callback that ends the wait.
    func resolveWait(_ outcome: CallbackOutcome) {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// Called by the server thread after it has closed every socket it owned. A wait still pending
    /// ends with `error` (or `.cancelled`).
    func serverEnded(error: OAuthError?) {
        let (waiter, closeWaiters) = state.withLock { state in
            state.listeners = []  // already closed by the server thread
            state.closeDescriptors()
            defer {
                state.waiter = nil
                state.closeWaiters = []
            }
            return (state.waiter, state.closeWaiters)
        }
        waiter?.resume(throwing: error ?? .cancelled)
        for continuation in closeWaiters { continuation.resume() }
    }

    private static func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        var byte: UInt8 = 1
        // A full buffer means a wake-up is already pending: nothing to do.
        _ = send(fd, &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }
}
