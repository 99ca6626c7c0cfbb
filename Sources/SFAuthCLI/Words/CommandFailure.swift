import SFAuth

/// What ends a command unsuccessfully: a status, and one line for standard error unless the
/// command has said everything itself.
package struct CommandFailure: Error {
    /// The line for standard error (`sfauth: ` goes in front); `nil` when there is nothing to add.
    package var message: String?
    /// The exit status.
    package var status: ExitStatus
    /// Lines of sfauth's own that follow the message as they are, line breaks kept (what to register
    /// for a preset); never text from outside, which the message line escapes.
    package var details: String?

    /// The failure for `error`, in sfauth's words, led by `context` when given (`git needs a token: …`).
    package init(_ error: OAuthError, context: String? = nil) {
        message = (context.map { "\($0): " } ?? "") + SFAuthWords.message(for: error)
        status = ExitStatus(error)
        if case .registerClient(let name)? = error.remedy { details = ProviderPreset.named(name)?.registration }
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
