import FoundationEssentials
import Glibc
import SFAuth
import SFAuthCLI
import Synchronization

/// Tells the person at the terminal what `sfauth login` is doing, on standard error.
final class LoginProgressReporter: OAuthCoordinatorDelegate {
    private let store: FileCredentialStore
    private let timeoutSeconds: Int
    private let acceptsPaste: Bool
    private let session: TerminalSession
    private let keyringNotice: String?
    private let verbose: Bool
    private let redirectURI = Mutex<String?>(nil)

    /// - Parameters:
    ///   - keyringNotice: why no keyring could be used, shown once per store after a sign-in that
    ///     actually kept a refresh token in a file.
    ///   - verbose: also say where the credentials were saved.
    init(
        store: FileCredentialStore, timeoutSeconds: Int, acceptsPaste: Bool, session: TerminalSession,
        keyringNotice: String? = nil, verbose: Bool = false
    ) {
        self.store = store
        self.timeoutSeconds = timeoutSeconds
        self.acceptsPaste = acceptsPaste
        self.session = session
        self.keyringNotice = keyringNotice
        self.verbose = verbose
    }

    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
        info: AuthInfo
    ) -> BrowserPresentation {
        self.redirectURI.withLock { $0 = redirectURI }
        let host = EndpointURL.parts(of: coordinator.configuration.server.authorizationEndpoint)?.host ?? "the server"
        if coordinator.configuration.browserLauncher != nil {
            say("Opening your browser to sign in at \(host)…")
            // WSL's Windows browser may open behind other windows, or not at all: the URL is printed too.
            if session.isWSL { say("If it does not open, open this URL:\n\n    \(url)\n") }
        } else if session.isRemoteWithoutDisplay {
            say("Not opening a browser: this is an SSH session without a forwarded display.")
        }
        say("Waiting for the sign-in (redirect to \(redirectURI); times out in \(formatDuration(timeoutSeconds)); press Ctrl-C to cancel).")
        return .openBrowser
    }

    /// The ways on when no browser opened here, in order: open the URL yourself (through an SSH port
    /// forward when the browser is elsewhere), paste the final address, or the device grant.
    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, browserNotOpenedFor url: String,
        reason: BrowserNotOpenedReason, info: AuthInfo
    ) {
        if case .launchFailed(let message) = reason {
            say(
                "Could not open a browser: \(message) (or give --browser-command)"
                    + (session.hasDisplay ? "" : " (no display here: DISPLAY and WAYLAND_DISPLAY are unset)."))
        }
        say("Open this URL in a browser to sign in:\n\n    \(url)\n")
        if let redirectURI = redirectURI.withLock({ $0 }), let port = EndpointURL.parts(of: redirectURI)?.port {
            let remote = session.isSSH ? "You are connected over SSH: " : ""
            say(
                "\(remote)if the browser runs on another machine, forward the port first, e.g. `ssh -L \(port):localhost:\(port) <this host>`, and this login completes by itself."
            )
        }
        if acceptsPaste {
            say("Or sign in there and paste here the address the browser ends up at (the page will not load).")
        }
        if coordinator.configuration.server.deviceAuthorizationEndpoint != nil {
            say("Or press Ctrl-C and run `sfauth login --device` with the same options: approve a code on any device.")
        }
    }

    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, didReceiveDeviceAuthorization authorization: DeviceAuthorization,
        info: AuthInfo
    ) {
        StandardError.write(DeviceInstructions.text(for: authorization))
        say("Waiting for the approval (press Ctrl-C to cancel)…")
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo) {
        say("Authorization received; getting tokens…")
    }

    /// One short line: who, where, and the name that selects the account (`SignedInMessage`), and
    /// what the server did not grant; where the files are with `--verbose`.
    func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {
        for line in SignedInMessage.lines(for: credentials, requestedScopes: coordinator.configuration.client.scopes) { say(line) }
        if verbose {
            var saved = "Saved in \(store.path(for: credentials.identifier))"
            if credentials.refreshTokenPlace == .secretStore, let secretStore = store.secretStore {
                saved += ", the refresh token in \(secretStore.displayName)"
            }
            say(saved + ".")
        }
        if let keyringNotice, credentials.refreshTokenPlace == .record {
            showOncePerStore(keyringNotice)
        }
    }

    /// Shows `notice` unless this store has shown it before (a marker file in the store).
    private func showOncePerStore(_ notice: String) {
        let marker = store.directory + "/.keyring-notice-shown"
        guard !FileManager.default.fileExists(atPath: marker) else { return }
        say(notice)
        _ = FileManager.default.createFile(atPath: marker, contents: Data(), attributes: [.posixPermissions: 0o600])
    }

    private func say(_ line: String) {
        StandardError.line(line)
    }

    private func formatDuration(_ seconds: Int) -> String {
        seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
