import SFAuth
#if canImport(Glibc)
import Glibc
#endif

/// Tells the person at the terminal what `sfauth login` is doing, on standard error.
final class LoginProgressReporter: OAuthCoordinatorDelegate {
    private let store: FileCredentialStore
    private let timeoutSeconds: Int
    private let acceptsPaste: Bool

    init(store: FileCredentialStore, timeoutSeconds: Int, acceptsPaste: Bool) {
        self.store = store
        self.timeoutSeconds = timeoutSeconds
        self.acceptsPaste = acceptsPaste
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
                          info: AuthInfo) -> BrowserPresentation {
        let host = EndpointURL.parts(of: coordinator.configuration.server.authorizationEndpoint)?.host ?? "the server"
        if coordinator.configuration.browserLauncher != nil {
            say("Opening your browser to sign in at \(host)…")
        }
        say("Waiting for the sign-in (redirect to \(redirectURI); times out in \(formatDuration(timeoutSeconds)); press Ctrl-C to cancel).")
        return .openBrowser
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, browserNotOpenedFor url: String,
                          reason: BrowserNotOpenedReason, info: AuthInfo) {
        if case .launchFailed(let message) = reason { say("Could not open a browser: \(message)") }
        say("Open this URL in a browser to sign in:\n\n    \(url)\n")
        if acceptsPaste {
            say("If that browser is on another machine, sign in there, then paste here the address it ends up at (the page will not load).")
        }
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo) {
        say("Authorization received; getting tokens…")
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {
        let who = credentials.username ?? "user \(credentials.userId ?? "unknown")"
        let at = credentials.instanceURL ?? EndpointURL.parts(of: credentials.server.tokenEndpoint)?.host ?? "the server"
        var saved = "Credentials saved in \(store.path(for: credentials.identifier))"
        if let secretStore = store.secretStore, store.placesNewRefreshTokensInSecretStore, credentials.refreshToken != nil {
            saved += ", the refresh token in \(secretStore.displayName)"
        }
        say("Signed in as \(who) at \(at). \(saved).")
    }

    private func say(_ line: String) {
        StandardError.line(line)
    }

    private func formatDuration(_ seconds: Int) -> String {
        seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
