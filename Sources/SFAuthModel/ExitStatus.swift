/// The exit statuses of every sfauth command, documented in the README and in `sfauth --help` —
/// of the main program and of the front end (which exits `localFault` when it cannot start the main
/// program).
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
    /// This machine failed: the login's loopback listener could not get a socket, `poll` or a thread;
    /// or sfauth itself is broken (the front end cannot start the main program).
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
