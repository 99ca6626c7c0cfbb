import SFAuth

/// The exit statuses of every sfauth command, documented in the README and in `sfauth --help`.
package enum ExitStatus: Int32 {
    /// The command did what was asked.
    case success = 0
    /// The credential store could not be read or written.
    case storage = 1
    /// Bad arguments or configuration.
    case usage = 2
    /// No usable credentials: run `sfauth login`.
    case loginRequired = 3
    /// The user cancelled, denied access, or did not finish in time.
    case cancelled = 4
    /// The authorization server refused (its error is shown), or its ID token failed validation.
    case serverRefused = 5
    /// No answer or an unusable answer from the server: retry later.
    case network = 6
    // 7 and 8 are `sfauth request`'s HTTP 4xx and 5xx (`RequestCommand.ResponseStatus`).
    /// This machine failed: the login's loopback listener could not get a socket, `poll` or a thread.
    case localFault = 9

    /// The status for an error, by what the user should do next.
    package init(_ error: OAuthError) {
        switch error {
        case .storage: self = .storage
        default:
            switch error.recovery {
            case .fixConfiguration: self = .usage
            case .logInAgain: self = .loginRequired
            case .cancelledByUser: self = .cancelled
            case .serverRefused: self = .serverRefused
            case .retryLater: self = .network
            case .localFault: self = .localFault
            }
        }
    }
}

/// An error that ends a command with a message (one line on stderr) and a status.
package struct CommandFailure: Error {
    package var message: String
    package var status: ExitStatus

    package init(_ error: OAuthError) {
        message = SFAuthWords.message(for: error)
        status = ExitStatus(error)
    }

    package init(usage message: String) {
        self.message = message
        status = .usage
    }
}
