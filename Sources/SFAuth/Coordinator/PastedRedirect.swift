import SFAuthCore
import Synchronization

/// The redirect as a person pastes it (the browser ran on another machine), as one cancellable wait
/// that can race the loopback listener's: whichever delivers first wins, the other is cancelled.
enum PastedRedirect {
    /// Waits for the first pasted line that belongs to `request`; lines that do not are reported to
    /// `source` and reading goes on. At the end of input it waits on, without an outcome (the
    /// listener may still get the redirect), until the task is cancelled.
    ///
    /// Reading happens on a thread of its own: standard input has no timeout and cannot be
    /// interrupted, so on cancellation the wait ends at once and the thread, still blocked in its
    /// read, drops whatever it reads next.
    /// - Throws: `CancellationError` when the task is cancelled.
    static func wait(from source: any RedirectURLSource, for request: AuthorizationRequest) async throws -> CallbackOutcome {
        let slot = Slot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard slot.install(continuation) else { return }
                try? DetachedThread.start {
                    while let line = source.nextLine(), slot.isWaiting {
                        if line.allSatisfy(\.isWhitespace) { continue }
                        let outcome = CallbackOutcome(pastedURL: line, redirectURI: request.redirectURI, expectedState: request.state)
                        if case .rejected(let reason) = outcome {
                            source.rejected(line, reason: reason)
                            continue
                        }
                        slot.resume(with: .success(outcome))
                        return
                    }
                }
                // Without a thread only the listener can end the wait: nothing to do here.
            }
        } onCancel: {
            slot.resume(with: .failure(CancellationError()))
        }
    }

    /// The one continuation of a wait, resumed exactly once: by the reading thread or by cancellation,
    /// whichever comes first. Cancellation may come before the continuation exists.
    private final class Slot: Sendable {
        private enum State {
            case starting
            case waiting(CheckedContinuation<CallbackOutcome, any Error>)
            case done
        }
        private let state = Mutex(State.starting)

        /// Whether the wait still wants a line.
        var isWaiting: Bool {
            state.withLock { if case .waiting = $0 { return true } else { return false } }
        }

        /// Keeps `continuation`; when the wait was already cancelled, resumes it and returns `false`.
        func install(_ continuation: CheckedContinuation<CallbackOutcome, any Error>) -> Bool {
            let cancelled = state.withLock { state -> Bool in
                guard case .starting = state else { return true }
                state = .waiting(continuation)
                return false
            }
            if cancelled { continuation.resume(throwing: CancellationError()) }
            return !cancelled
        }

        /// Resumes the continuation with `result` if nothing did yet.
        func resume(with result: Result<CallbackOutcome, any Error>) {
            let continuation = state.withLock { state -> CheckedContinuation<CallbackOutcome, any Error>? in
                defer { state = .done }
                if case .waiting(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(with: result)
        }
    }
}
