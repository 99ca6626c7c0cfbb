/// Opens a URL in the user's browser.
///
/// The coordinator calls it once per login with the authorization URL. An implementation returns
/// as soon as the browser has been asked to open the page (it does not wait for the page to load)
/// and throws when it could not: the coordinator then shows the URL so the user can open it.
public protocol BrowserLauncher: Sendable {
    /// Asks the browser to open `url`.
    ///
    /// - Throws: `BrowserLaunchError` (for `SystemBrowserLauncher`) saying why no browser opened.
    func open(_ url: String) throws
}

/// Why a browser could not be opened, in one line for the user, e.g.
/// `xdg-open exited with status 3 (no method available for opening 'http://…')`.
public struct BrowserLaunchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line: what failed and, where we know, what to do instead.
    public var message: String

    /// Creates an error with the given message.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
