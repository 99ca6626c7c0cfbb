import SFAuthCore

// The vocabulary of `LoopbackStateMachine`: what it is configured with, what goes in and what comes out.
extension LoopbackStateMachine {
    /// What the wait is for.
    struct Configuration: Sendable {
        /// The port the listener is bound to: requests must name it in their `Host` field.
        var port: UInt16
        /// The callback path, matched exactly.
        var callbackPath: String
        /// Whose sign-in it is: the result pages' path and the product they name.
        var app: AppIdentity = .sfauth
        /// The `state` sent in the authorization request, compared exactly.
        var expectedState: String
        /// How long to wait for the callback.
        var timeout: Milliseconds
        /// What the wait ends with when `timeout` passes.
        var timeoutError: OAuthError
    }

    /// The limits that keep a stray or hostile client from holding the listener.
    struct Limits: Sendable, Equatable {
        /// Most connections open at once; beyond that the oldest idle one is closed.
        var maximumConnections = 32
        /// A connection that sends nothing (or reads nothing) for this long is closed.
        var idleTimeout: Milliseconds = 10_000
        /// How long a connection may still send after its response before it is closed.
        var drainTimeout: Milliseconds = 2_000
        /// How long, after `finish`, the browser has to ask for the result page.
        var finishGracePeriod: Milliseconds = 3_000
        /// How long accepting pauses after `accept` failed for want of descriptors or memory.
        var acceptPause: Milliseconds = 100
    }

    /// What happened, as the loop saw it.
    enum Event: Equatable {
        /// A connection was accepted.
        case accepted(ConnectionID)
        /// `accept` failed for want of descriptors or memory (not a transient `EAGAIN`/`EINTR`).
        case acceptFailed
        /// Bytes arrived on a connection.
        case received(ConnectionID, [UInt8])
        /// The bytes of the last `.send` were written up to `count` (all of them, or until the
        /// socket's buffer was full).
        case sent(ConnectionID, count: Int)
        /// A connection waiting to write can take more bytes.
        case writable(ConnectionID)
        /// The peer shut its sending side (a read returned end of file).
        case peerFinished(ConnectionID)
        /// Reading or writing failed; `reset` when the peer reset the connection.
        case peerFailed(ConnectionID, reset: Bool)
        /// The socket reports hang-up or an error while nothing was being read or written.
        case hungUp(ConnectionID)
        /// The caller asked for the result page (``LoopbackListener/finish(_:)``).
        case finish(LoopbackListener.ResultPage)
        /// The caller cancelled.
        case cancel
        /// Time passed: deadlines are checked.
        case tick
    }

    /// What the loop must do, in order.
    enum Action: Equatable {
        /// Write `bytes` on the connection, then report `.sent` with how many were written (or
        /// `.peerFailed`).
        case send(ConnectionID, ArraySlice<UInt8>)
        /// The connection holds the accepted callback: it stays open, unanswered, until `finish`.
        case hold(ConnectionID)
        /// The response is complete: shut the sending side so the client sees its end, and discard
        /// what the client sent meanwhile (closing with unread input would reset the connection and
        /// could lose the response).
        case shutdownWrite(ConnectionID)
        /// Close the connection.
        case close(ConnectionID)
        /// The redirect arrived: end the wait with this outcome.
        case resolve(CallbackOutcome)
        /// The listener is done: close every socket; a wait still pending ends with the error (or
        /// `.cancelled` when there is none).
        case stop(OAuthError?)
    }

    /// Which readiness the loop should wait for on a connection.
    enum Interest: Equatable {
        case read, write
        /// Nothing to read or write; only a hang-up matters (`.hungUp`).
        case hangUp
    }
}
