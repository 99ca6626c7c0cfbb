/// One client connection as `LoopbackStateMachine` sees it: where it is in its one request and
/// response, and what it has sent and is owed. No descriptor is touched here.
struct LoopbackConnection: Equatable {
    enum Phase: Equatable {
        /// Reading the request head.
        case reading
        /// The accepted callback: unanswered until `finish`.
        case held
        /// Writing a response.
        case writing
        /// Response written and sending side shut: discarding input until end of file or a deadline.
        case draining
    }

    /// What the response being written is for: the listener's life depends on the last two.
    enum Purpose: Equatable {
        case other
        /// The `303` after the callback.
        case redirect
        /// The result page: once it is written (or fails), the listener is done.
        case resultPage
    }

    let id: LoopbackStateMachine.ConnectionID
    var phase = Phase.reading
    var input: [UInt8] = []
    var output: [UInt8] = []
    var written = 0
    var purpose = Purpose.other
    /// Idle, write or drain deadline; unused while held.
    var deadline: LoopbackStateMachine.Milliseconds
    /// The held connection's peer has shut its side (it may still read our answer).
    var peerFinished = false

    init(id: LoopbackStateMachine.ConnectionID, deadline: LoopbackStateMachine.Milliseconds) {
        self.id = id
        self.deadline = deadline
    }

    /// What the loop waits for on this connection.
    var interest: LoopbackStateMachine.Interest {
        switch phase {
        case .reading, .draining: return .read
        case .held: return peerFinished ? .hangUp : .read
        case .writing: return .write
        }
    }
}
