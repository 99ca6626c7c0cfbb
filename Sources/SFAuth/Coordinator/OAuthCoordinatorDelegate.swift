import Glibc
import SFAuthCore

/// What the coordinator should do when it is about to open the browser.
public enum BrowserPresentation: Sendable, Equatable {
    /// Open the browser as configured (default).
    case openBrowser
    /// The delegate shows the URL its own way; the coordinator only waits for the redirect.
    case handledByDelegate
}

/// Why the user has to open the authorization URL themselves.
public enum BrowserNotOpenedReason: Sendable, Equatable {
    /// The coordinator was configured not to open a browser (`--no-browser`).
    case browserDisabled
    /// Launching the browser failed; the message says how.
    case launchFailed(String)
}

/// Observes an `OAuthCoordinator`'s flow (after `SFOAuthCoordinatorDelegate`).
///
/// Callbacks arrive in this order, one at a time, never concurrently: `willBeginAuthentication`,
/// `willOpenBrowser` (and `browserNotOpened` when the user must open the URL), `didReceiveAuthorizationCode`,
/// then exactly one of `didAuthenticate` or `didFail`. The device grant has `didReceiveDeviceAuthorization`
/// in place of the browser steps; the other grants without a browser go straight from
/// `willBeginAuthentication` to the outcome. Every method has a default implementation,
/// so a delegate implements only what it needs. The delegate observes; only `willOpenBrowser` steers.
public protocol OAuthCoordinatorDelegate: AnyObject, Sendable {
    /// The flow is starting. Default: nothing.
    func oauthCoordinator(_ coordinator: OAuthCoordinator, willBeginAuthenticationWith info: AuthInfo)

    /// The authorization URL is ready and the listener is waiting at `redirectURI`. Return
    /// `.handledByDelegate` to show the URL yourself instead of opening the browser.
    /// Default: `.openBrowser`.
    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
        info: AuthInfo
    ) -> BrowserPresentation

    /// No browser was opened; the user must open `url` themselves. The login keeps waiting.
    /// Default: writes the URL to standard error.
    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, browserNotOpenedFor url: String,
        reason: BrowserNotOpenedReason, info: AuthInfo)

    /// The redirect with an authorization code arrived; the token exchange starts. Default: nothing.
    func oauthCoordinator(_ coordinator: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo)

    /// The device authorization grant (RFC 8628) has its codes: the person must open the verification
    /// page (on any device) and enter the user code; polling starts now. Default: writes the
    /// instructions to standard error.
    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, didReceiveDeviceAuthorization authorization: DeviceAuthorization,
        info: AuthInfo)

    /// The flow succeeded; the credentials are stored when a store was given. Default: nothing.
    func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo)

    /// The flow failed; nothing stored was changed. Default: nothing.
    func oauthCoordinator(_ coordinator: OAuthCoordinator, didFailWith error: OAuthError, info: AuthInfo)
}

extension OAuthCoordinatorDelegate {
    /// Does nothing.
    public func oauthCoordinator(_ coordinator: OAuthCoordinator, willBeginAuthenticationWith info: AuthInfo) {}

    /// Returns `.openBrowser`: the coordinator opens the browser as configured.
    public func oauthCoordinator(
        _ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
        info: AuthInfo
    ) -> BrowserPresentation { .openBrowser }

    /// Writes the URL (and why no browser opened) to standard error.
    public func oauthCoordinator(
        _ coordinator: OAuthCoordinator, browserNotOpenedFor url: String,
        reason: BrowserNotOpenedReason, info: AuthInfo
    ) {
        var text = ""
        if case .launchFailed(let message) = reason { text += "Could not open a browser: \(message)\n" }
        text += "Open this URL in a browser to sign in:\n\n    \(url)\n\n"
        StandardError.write(text)
    }

    /// Does nothing.
    public func oauthCoordinator(_ coordinator: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo) {}

    /// Writes the verification page and the user code to standard error.
    public func oauthCoordinator(
        _ coordinator: OAuthCoordinator, didReceiveDeviceAuthorization authorization: DeviceAuthorization,
        info: AuthInfo
    ) {
        StandardError.write(DeviceInstructions.text(for: authorization))
    }

    /// Does nothing.
    public func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {}

    /// Does nothing.
    public func oauthCoordinator(_ coordinator: OAuthCoordinator, didFailWith error: OAuthError, info: AuthInfo) {}
}
