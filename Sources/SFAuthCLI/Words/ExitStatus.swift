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
    /// `sfauth request`: the server answered with an HTTP 4xx status.
    case httpClientError = 7
    /// `sfauth request`: the server answered with an HTTP 5xx status.
    case httpServerError = 8
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

/// What ends a command unsuccessfully: a status, and one line for standard error unless the
/// command has said everything itself.
package struct CommandFailure: Error {
    /// The line for standard error (`sfauth: ` goes in front); `nil` when there is nothing to add.
    package var message: String?
    /// The exit status.
    package var status: ExitStatus

    /// The failure for `error`, in sfauth's words, led by `context` when given (`git needs a token: …`).
    package init(_ error: OAuthError, context: String? = nil) {
        message = (context.map { "\($0): " } ?? "") + SFAuthWords.message(for: error)
        status = ExitStatus(error)
    }

    /// A usage error (exit 2).
    package init(usage message: String) {
        self.message = message
        status = .usage
    }

    /// A failure that is not an `OAuthError`: `message`, and `status`.
    package init(_ message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// An exit with `status` and nothing more to say.
    package init(silently status: ExitStatus) {
        message = nil
        self.status = status
    }
}
