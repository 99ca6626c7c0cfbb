import Glibc
import SFAuthCore

/// A one-shot HTTP server on the loopback interface that catches the authorization server's
/// redirect (RFC 8252 §7.3).
///
/// Bind it before building the authorization request, use ``redirectURI`` as the `redirect_uri`,
/// then ``waitForCallback(expectedState:timeout:)`` and, once the code is exchanged,
/// ``finish(_:)`` to show the user a result page. Connections are served concurrently on one
/// dedicated thread with `poll()`, so idle browser preconnects never stall the real redirect.
/// Anything that is not a `GET` on the exact callback path gets `404`; a callback without our
/// `state` gets `400` and the wait goes on.
package final class LoopbackListener: Sendable {
    /// Where the listener binds and which path it answers.
    package struct Configuration: Sendable, Equatable {
        /// Host name used in the redirect URI: `"127.0.0.1"` (default), `"[::1]"`, or `"localhost"`
        /// (binds 127.0.0.1 and, where it exists, ::1 on the same port).
        package var host: String
        /// Port to bind; 0 (default) picks an ephemeral one. Fixed ports are for servers that
        /// register an exact redirect URI (Salesforce's CLI uses 1717).
        package var port: UInt16
        /// Path of the callback, e.g. `"/callback"` (default) or `"/OauthRedirect"`; matched exactly.
        package var callbackPath: String
        /// Whose sign-in it is: the result pages name it, at `/<app name>/signed-in`. Default: `.sfauth`.
        package var app: AppIdentity

        /// Creates a configuration; the defaults give `http://127.0.0.1:<ephemeral>/callback`.
        package init(host: String = "127.0.0.1", port: UInt16 = 0, callbackPath: String = "/callback", app: AppIdentity = .sfauth) {
            self.host = host
            self.port = port
            self.callbackPath = callbackPath
            self.app = app
        }
    }

    /// The page shown in the browser after the redirect.
    package enum ResultPage: Sendable, Equatable {
        /// "You are signed in", with `detail` (e.g. the account name) shown HTML-escaped.
        case signedIn(detail: String)
        /// "Sign-in failed", with `message` shown HTML-escaped and a pointer to the terminal.
        case failed(message: String)
    }

    /// The configuration the listener was created with.
    package let configuration: Configuration
    /// The port actually bound (the ephemeral one when the configuration asked for 0).
    package let port: UInt16
    /// The redirect URI to send as `redirect_uri`, built from the bound port,
    /// e.g. `http://127.0.0.1:54321/callback`.
    package let redirectURI: String

    private let core: LoopbackListenerCore
    /// Connection limit and timeouts; tests shorten them.
    private let limits: LoopbackStateMachine.Limits

    /// Binds at once, before the authorization request is built.
    ///
    /// `"127.0.0.1"` binds 127.0.0.1, `"[::1]"` binds ::1, `"localhost"` binds both on the same port
    /// (127.0.0.1 alone where ::1 does not exist). Never the wildcard address. Every descriptor is
    /// close-on-exec, so a browser started meanwhile inherits none of them.
    ///
    /// - Throws: `OAuthError.portInUse` when the port is taken ("port 1717 on 127.0.0.1 is already
    ///   in use, held by …"); `OAuthError.configuration` when the host is not a loopback host, the
    ///   path is not an absolute path, or the port needs privileges; `OAuthError.localFault` when
    ///   this machine cannot give a socket (out of descriptors, no loopback interface, …).
    package convenience init(configuration: Configuration = Configuration()) throws(OAuthError) {
        try self.init(configuration: configuration, limits: LoopbackStateMachine.Limits())
    }

    /// Binds at once, with other limits (for tests).
    init(configuration: Configuration, limits: LoopbackStateMachine.Limits) throws(OAuthError) {
        let path = configuration.callbackPath
        guard path.hasPrefix("/"), !path.contains(where: { "?# \t\r\n".contains($0) }) else {
            throw .configuration(
                "the callback path '\(path)' must start with '/' and contain no '?', '#' or spaces")
        }
        let bound = try LoopbackSockets.bind(host: configuration.host, port: configuration.port)
        self.configuration = configuration
        self.limits = limits
        self.port = bound.port
        self.redirectURI = "http://\(configuration.host):\(bound.port)\(path)"
        do {
            self.core = try LoopbackListenerCore(listeners: bound.fds)
        } catch {
            for fd in bound.fds { LoopbackSockets.shutdownAndClose(fd) }
            throw error
        }
    }

    deinit {
        core.cancel()
    }

    /// Waits for the browser's redirect to the callback path.
    ///
    /// Returns the first callback whose `CallbackOutcome` is `.authorized` or `.denied`. The
    /// browser's connection for that request is held open, unanswered, until ``finish(_:)``.
    /// Callbacks that are `.rejected` (no or wrong `state`, malformed query) get a `400` page and the
    /// wait goes on. May be called once.
    ///
    /// - Parameters:
    ///   - expectedState: the `state` sent in the authorization request; compared exactly.
    ///   - timeout: how long to wait for the redirect.
    /// - Throws: `OAuthError.timedOut` when the deadline passes, `OAuthError.cancelled` on task
    ///   cancellation or ``cancel()``, `OAuthError.localFault` when the listener itself fails
    ///   (`poll`, no thread). In every throwing case all sockets are closed on return.
    package func waitForCallback(expectedState: String, timeout: Duration) async throws(OAuthError) -> CallbackOutcome {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        let wholeSeconds = Int((Double(seconds) + Double(attoseconds) / 1e18).rounded())
        // A port picked at random is good for this sign-in only: registering it would not help the next.
        let register =
            configuration.port == 0
            ? "make sure the client accepts \(configuration.host) redirects on any port (RFC 8252 §7.3)"
            : "register \(redirectURI) for this client"
        let hint = Problem(
            "No redirect arrived. If the browser showed an error from the server — an unknown client id, or a redirect URI "
                + "that is not registered — check the client id, or \(register); otherwise sign in again.",
            remedy: configuration.port == 0 ? .chooseCallbackPort : nil)
        let wait = LoopbackStateMachine.Configuration(
            port: port,
            callbackPath: configuration.callbackPath,
            app: configuration.app,
            expectedState: expectedState,
            timeout: milliseconds,
            timeoutError: .timedOut(seconds: wholeSeconds, hint: hint))
        let core = self.core
        let limits = self.limits
        do {
            // Task cancellation is the one way in: the handler wakes the server thread's poll().
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    core.start(wait, limits: limits, continuation: continuation)
                }
            } onCancel: {
                core.cancel()
            }
        } catch let error as OAuthError {
            throw error
        } catch {
            throw .cancelled  // not reached: the listener fails only with OAuthError
        }
    }

    /// Answers the held callback with `303 See Other` to a local page (`/sfauth/signed-in` or
    /// `/sfauth/failed`), so the code never stays in the address bar; serves that page when the
    /// browser asks for it; then closes everything — as soon as the page has been served, or after
    /// a grace period of 3 s at most. Returns when everything is closed. Without a held callback
    /// (or after ``cancel()``) it just closes.
    package func finish(_ page: ResultPage) async {
        let core = self.core
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                core.finish(page, continuation: continuation)
            }
        } onCancel: {
            core.cancel()
        }
    }

    /// The local addresses of the listening sockets, e.g. `["127.0.0.1:54321"]`, before
    /// ``waitForCallback(expectedState:timeout:)`` (for tests); `nil` afterwards.
    var boundAddresses: [String]? { core.boundAddresses() }

    /// Closes everything at once; a pending ``waitForCallback(expectedState:timeout:)`` throws
    /// `OAuthError.cancelled`. Idempotent, callable from any thread.
    package func cancel() {
        core.cancel()
    }
}
