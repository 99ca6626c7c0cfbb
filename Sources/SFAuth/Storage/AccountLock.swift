import Glibc
import SFAuthCore

/// An exclusive lock on one account, held across a token refresh, between threads and processes
/// (`flock` on `locks/<account>.lock`; each acquisition opens its own descriptor, so threads of one
/// process exclude each other too). The kernel releases it if the process dies.
public final class AccountLock: Sendable {
    private let descriptor: Int32
    /// Whether another holder had it when it was asked for, so that this one waited.
    package let waited: Bool

    private init(descriptor: Int32, waited: Bool) {
        self.descriptor = descriptor
        self.waited = waited
    }

    deinit { close(descriptor) }

    /// Waits for the lock, polling without blocking a thread, so the wait can be cancelled.
    ///
    /// - Parameters:
    ///   - path: the lock file (created 0600 when missing).
    ///   - timeout: how long to wait for another holder. Default: 60 s.
    ///   - clock: what the wait between attempts and the timeout are measured on. Default: `SystemClock()`.
    /// - Throws: `OAuthError.storage` when the lock file cannot be opened or `timeout` passes;
    ///   `OAuthError.cancelled` when the task is cancelled.
    public static func acquire(
        path: String, timeout: Duration = .seconds(60),
        clock: any AuthClock = SystemClock()
    ) async throws(OAuthError) -> AccountLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .storage("cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        return try await acquire(descriptor: descriptor, path: path, timeout: timeout, clock: clock)
    }

    /// Waits for the lock on the lock file open as `descriptor` (which the lock then owns and closes),
    /// named `path` in messages. (`FileCredentialStore` opens it through the store's descriptor.)
    static func acquire(
        descriptor: Int32, path: String, timeout: Duration = .seconds(60),
        clock: any AuthClock
    ) async throws(OAuthError) -> AccountLock {
        var waited = false
        let deadline = clock.monotonicNow() + timeout
        var pause = Duration.milliseconds(1)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(descriptor)
                throw .storage("cannot lock \(path): \(String(cString: strerror(code)))")
            }
            if code == EWOULDBLOCK { waited = true }
            guard clock.monotonicNow() < deadline else {
                close(descriptor)
                throw .storage(
                    "another process has held \(path) for more than \(timeout); try again, or remove the file if that process is no longer running")
            }
            do { try await clock.sleep(for: pause) } catch {
                close(descriptor)
                throw .cancelled
            }
            pause = min(pause * 2, .milliseconds(20))
        }
        return AccountLock(descriptor: descriptor, waited: waited)
    }
}
