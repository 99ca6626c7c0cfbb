import Glibc
import SFAuthCore

/// The I/O of a `LoopbackListener`: one dedicated thread, non-blocking sockets, `poll()`. It makes
/// no decision of its own — it turns what the sockets report into `LoopbackStateMachine` events and
/// carries out the actions that come back. Everything here is confined to that thread; it talks to
/// callers only through `LoopbackListenerCore`, which wakes `poll()` through `wakeFD`.
final class LoopbackServer {
    private var machine: LoopbackStateMachine
    private var listeners: [Int32]
    private let wakeFD: Int32
    private let core: LoopbackListenerCore
    private var scratch = [UInt8](repeating: 0, count: 4096)

    init(
        _ configuration: LoopbackStateMachine.Configuration, limits: LoopbackStateMachine.Limits,
        listeners: [Int32], wakeFD: Int32, core: LoopbackListenerCore
    ) {
        self.machine = LoopbackStateMachine(configuration: configuration, limits: limits, now: GlibcExtras.monotonicMilliseconds())
        self.listeners = listeners
        self.wakeFD = wakeFD
        self.core = core
    }

    /// Closes the listening sockets and every connection (shut down first: closed for good even if
    /// a child being spawned holds copies of the descriptors, see `LoopbackSockets.shutdownAndClose`).
    func closeAll() {
        for fd in listeners { LoopbackSockets.shutdownAndClose(fd) }
        listeners = []
        for fd in machine.connectionIDs { LoopbackSockets.shutdownAndClose(fd) }
    }

    // MARK: - The loop

    /// Serves until the wait ends and the result page is shown (or the listener is cancelled or
    /// fails), then closes everything. Runs on the listener's own thread (`DetachedThread`).
    func run() {
        var pollFDs: [pollfd] = []
        while true {
            let commands = core.takeCommands()
            if commands.cancel, !perform(.cancel) { return }
            if let page = commands.finish, !perform(.finish(page)) { return }
            if !perform(.tick) { return }

            let now = GlibcExtras.monotonicMilliseconds()
            pollFDs.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
            let accepting = machine.isAccepting(at: now)
            if accepting {
                for fd in listeners { pollFDs.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
            }
            let firstConnection = pollFDs.count
            let polled = machine.connectionIDs.compactMap { id in machine.interest(of: id).map { (id, $0) } }
            for (id, interest) in polled {
                let events: Int32
                switch interest {
                case .read: events = POLLIN
                case .write: events = POLLOUT
                case .hangUp: events = 0  // POLLHUP and POLLERR are always reported
                }
                pollFDs.append(pollfd(fd: id, events: Int16(events), revents: 0))
            }

            let timeout = machine.nextDeadline(after: now).map { Int32(clamping: max(0, $0 - now)) } ?? -1
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
            if ready < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return end(.localFault("the listener failed: poll: \(GlibcExtras.errorText(errno))"))
            }
            if ready == 0 { continue }

            if pollFDs[0].revents != 0 { drainWakeChannel() }
            if accepting {
                for index in 1..<firstConnection where pollFDs[index].revents != 0 {
                    if !acceptConnections(pollFDs[index].fd) { return }
                }
            }
            for (offset, (id, interest)) in polled.enumerated() {
                let revents = pollFDs[firstConnection + offset].revents
                // An earlier action may have closed it (and `accept` reused its number): ask again.
                guard revents != 0, machine.interest(of: id) == interest else { continue }
                let keepGoing: Bool
                switch interest {
                case .read: keepGoing = readAvailable(id)
                case .write: keepGoing = perform(.writable(id))
                case .hangUp: keepGoing = perform(.hungUp(id))
                }
                if !keepGoing { return }
            }
        }
    }

    /// Hands `event` to the state machine and carries out its actions. Returns `false` once the
    /// listener has stopped.
    private func perform(_ event: LoopbackStateMachine.Event) -> Bool {
        let actions = machine.handle(event, at: GlibcExtras.monotonicMilliseconds())
        for action in actions {
            switch action {
            case .send(let id, let bytes):
                if !perform(write(bytes, on: id)) { return false }
            case .hold:
                break  // nothing to do: the connection simply gets no answer yet
            case .shutdownWrite(let id):
                shutdown(id, Int32(SHUT_WR))
                discardInput(id)
            case .close(let id):
                LoopbackSockets.shutdownAndClose(id)
            case .resolve(let outcome):
                core.resolveWait(outcome)
            case .stop(let error):
                end(error)
                return false
            }
        }
        return !machine.isStopped
    }

    private func end(_ error: OAuthError?) {
        closeAll()
        core.serverEnded(error: error)
    }

    private func drainWakeChannel() {
        while recv(wakeFD, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    /// Accepts until the queue is empty. Returns `false` once the listener has stopped.
    private func acceptConnections(_ listener: Int32) -> Bool {
        while true {
            let fd = GlibcExtras.acceptCloseOnExecNonBlocking(listener)
            if fd >= 0 {
                if !perform(.accepted(fd)) { return false }
                continue
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EAGAIN, EWOULDBLOCK: return true
            default: return perform(.acceptFailed)
            }
        }
    }

    /// Reads while the state machine wants input and there is some. Returns `false` once the
    /// listener has stopped.
    private func readAvailable(_ id: Int32) -> Bool {
        while machine.interest(of: id) == .read {
            let count = recv(id, &scratch, scratch.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                if !perform(.received(id, Array(scratch[0..<count]))) { return false }
                continue
            }
            if count == 0 { return perform(.peerFinished(id)) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return true
            default: return perform(.peerFailed(id, reset: errno == ECONNRESET))
            }
        }
        return true
    }

    /// Writes as much of `bytes` as the socket takes now; the event to report.
    private func write(_ bytes: ArraySlice<UInt8>, on id: Int32) -> LoopbackStateMachine.Event {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(id, buffer.baseAddress! + written, buffer.count - written, Int32(MSG_NOSIGNAL))
            }
            if count >= 0 {
                written += count
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .sent(id, count: written)
            default: return .peerFailed(id, reset: errno == ECONNRESET)
            }
        }
        return .sent(id, count: written)
    }

    /// Reads and drops whatever the client has sent so far, without waiting.
    private func discardInput(_ id: Int32) {
        while recv(id, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {}
    }
}
