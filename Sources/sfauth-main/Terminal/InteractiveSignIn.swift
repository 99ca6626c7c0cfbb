import Glibc
import SFAuth
import SFAuthCLI

/// A sign-in started by a helper command (kubectl's exec plugin) on the user's terminal: one at a
/// time across processes. kubectl, k9s and editors call plugins in parallel; the first caller that
/// needs a sign-in takes the sign-in lock and runs `sfauth login --account NAME` (the account's own
/// recipe), the others wait for the lock and then find the new token stored.
struct InteractiveSignIn {
    /// The store the account lives in (its directory holds the lock).
    let store: FileCredentialStore
    /// The `sfauth` to run `login` with.
    let executablePath: String

    /// Whether a person can answer here: the caller allows it and a terminal is attached (standard
    /// input, or `/dev/tty`).
    static func terminalAvailable() -> Bool {
        if isatty(0) == 1 { return true }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return false }
        close(tty)
        return true
    }

    /// Runs `body` (which gets a token, throwing `.loginRequired` when it cannot) under the sign-in
    /// lock; when it still needs a sign-in, signs `account` in with `sfauth login --account NAME`
    /// (its standard output sent to standard error, so the helper's stdout stays the protocol's) and
    /// runs `body` once more. A caller that waited for another process's sign-in takes its result:
    /// when that one failed, it fails too instead of starting another.
    ///
    /// - Throws: `.loginRequired` when the sign-in failed (the child's words are on stderr), or what
    ///   `body` throws otherwise.
    func withSignIn<T>(of account: OAuthCredentials, _ body: () async throws(OAuthError) -> T) async throws(OAuthError) -> T {
        // Through the store's checked directory, as every lock of the store.
        let lock = try await store.lock(account: "sign-in:" + account.identifier, timeout: .seconds(600))
        defer { withExtendedLifetime(lock) {} }
        let another = lock.waited
        do {
            return try await body()  // another process may have signed in while we waited
        } catch .loginRequired {
            // Another process's sign-in ended while we waited, and did not help: its result is ours
            // too (one cancelled sign-in must not become one browser tab per waiting caller).
            let again = "run `\(SFAuthWords.signInCommand(for: account))`"
            if another {
                throw .loginRequired("the sign-in of \(account.displayLabel) that another sfauth process started did not complete; \(again)")
            }
            guard runLogin(account: account.selectableName) == 0 else {
                throw .loginRequired("the sign-in of \(account.displayLabel) did not complete; \(again)")
            }
            return try await body()
        }
    }

    /// Runs `sfauth login --account NAME` with stdin and stderr inherited and stdout on stderr.
    private func runLogin(account: String) -> Int32 {
        ChildCommand.run([executablePath, "login", "--account", account], stdoutToStderr: true)
    }
}
