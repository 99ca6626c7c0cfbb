import FoundationEssentials
import SFAuthCore
import Synchronization

/// Runs a browser sign-in (after `SFOAuthCoordinator`): binds a loopback listener, opens the
/// browser at the authorization endpoint, catches the redirect, exchanges the code over the
/// `HTTPClient` (PKCE, `state`), stores the credentials and tells its delegate each step.
///
/// ```swift
/// let coordinator = OAuthCoordinator(configuration: .init(server: server, client: client, app: app), delegate: self,
///                                    store: try FileCredentialStore(app: app, environment: environment))
/// let credentials = try await coordinator.authenticate()
/// ```
public final class OAuthCoordinator: Sendable {
    /// What to sign in to, and how.
    public struct Configuration: Sendable {
        /// The authorization server.
        public var server: AuthorizationServer
        /// The client, its scopes and its redirect.
        public var client: ClientConfiguration
        /// The application signing in: its name is on the browser's result page. Default: `.sfauth`.
        public var app: AppIdentity
        /// How long to wait for the browser's redirect. Default: 5 minutes.
        public var timeout: Duration
        /// Opens the browser; `nil` means never open one and only show the URL (`--no-browser`).
        /// Default: `SystemBrowserLauncher()` (xdg-open, honouring `$BROWSER`).
        public var browserLauncher: (any BrowserLauncher)?
        /// An alias for the account signed in; it is taken from any other account that had it.
        /// Default: `nil` (keep the alias the account already has).
        public var alias: String?
        /// Whether the account signed in becomes the store's default account. Default: `true`.
        public var makeDefault: Bool
        /// The stored account (its identifier) this sign-in is meant to sign in again; `nil` for any.
        /// When the server signs in someone else, their sign-in is kept as an account of its own,
        /// but not made the default nor given `alias`, and the flow ends with `loginRequired` naming
        /// both; a sign-in whose user the server never names takes this account's place (when it
        /// too was never named) instead of becoming another one. Default: `nil`.
        public var account: String?
        /// Where a person may paste the redirect URL when the browser runs elsewhere (`nil`: only
        /// the listener). The first pasted URL that belongs to this login ends the wait. Default: `nil`.
        public var pastedRedirects: (any RedirectURLSource)?
        /// Whether to ask the server who signed in (OIDC userinfo or Salesforce's identity URL) after
        /// the exchange, for the username, display name and email. Best effort. Default: `true`.
        public var fetchIdentity: Bool
        /// When `accessToken(account:resource:interactive:)` reuses a stored token and how it renews one —
        /// the leeway, the lifetime assumed when the server does not say, a client secret — as
        /// `sfauth token` does with its environment variables (`TokenSource.Options(settings:)`).
        /// Default: `TokenSource.Options()` (60 s, 2 hours), with `client.clientSecret` when it has none.
        public var tokenOptions: TokenSource.Options

        /// Creates a configuration.
        public init(
            server: AuthorizationServer, client: ClientConfiguration, app: AppIdentity = .sfauth, timeout: Duration = .seconds(300),
            browserLauncher: (any BrowserLauncher)? = SystemBrowserLauncher(), alias: String? = nil,
            makeDefault: Bool = true, account: String? = nil, fetchIdentity: Bool = true,
            pastedRedirects: (any RedirectURLSource)? = nil, tokenOptions: TokenSource.Options = TokenSource.Options()
        ) {
            self.server = server
            self.client = client
            self.app = app
            self.timeout = timeout
            self.browserLauncher = browserLauncher
            self.alias = alias
            self.makeDefault = makeDefault
            self.account = account
            self.fetchIdentity = fetchIdentity
            self.pastedRedirects = pastedRedirects
            self.tokenOptions = tokenOptions
            if self.tokenOptions.clientSecret == nil { self.tokenOptions.clientSecret = client.clientSecret }
        }
    }

    /// The configuration this coordinator was created with.
    public let configuration: Configuration
    /// Receives the flow's callbacks. Held weakly, as `SFOAuthCoordinator` does.
    public var delegate: (any OAuthCoordinatorDelegate)? { state.withLock { $0.delegate.value } }

    let httpClient: any HTTPClient
    /// Checks ID tokens; caches the servers' signing keys for this coordinator's lifetime.
    let idTokenValidator: IDTokenValidator
    let store: (any CredentialStore)?
    /// The time expiry is computed from, and what the device grant's polling waits and its deadline are measured on.
    let clock: any AuthClock
    private let state = Mutex(FlowState())

    private struct FlowState: ~Copyable {
        var delegate = WeakDelegate()
        /// The flow in progress, which `cancel()` cancels.
        var flow: Task<OAuthCredentials, any Error>?
    }

    /// Creates a coordinator.
    ///
    /// - Parameters:
    ///   - configuration: what to sign in to, and how.
    ///   - delegate: hears each step of a flow; held weakly, so keep it alive yourself. `nil` for none.
    ///   - httpClient: sends the token request. Default: `CurlHTTPClient()`.
    ///   - store: where successful credentials are saved before `didAuthenticate`; `nil` keeps them in memory only.
    ///   - clock: the time expiry is computed from, and what the device grant's polling waits and
    ///     its deadline are measured on. Default: `SystemClock()`. (Waiting for another process's
    ///     refresh lock is the store's: see `FileCredentialStore.clock`.)
    public init(
        configuration: Configuration, delegate: (any OAuthCoordinatorDelegate)?,
        httpClient: any HTTPClient = CurlHTTPClient(), store: (any CredentialStore)? = nil,
        clock: any AuthClock = SystemClock()
    ) {
        self.configuration = configuration
        self.httpClient = httpClient
        idTokenValidator = IDTokenValidator(httpClient: httpClient)
        self.store = store
        self.clock = clock
        state.withLock { $0.delegate = WeakDelegate(delegate) }
    }

    /// Runs the browser sign-in and returns the credentials; the delegate hears the same outcome.
    ///
    /// Ends with `OAuthError.cancelled` on task cancellation or `cancel()`, and `OAuthError.timedOut`
    /// when no redirect arrives within `configuration.timeout`; the listener is closed in every case.
    /// On failure nothing stored is changed.
    public func authenticate() async throws(OAuthError) -> OAuthCredentials {
        try await runFlow(info: AuthInfo(authType: .browser)) { coordinator, info throws(OAuthError) in
            try await coordinator.runBrowserFlow(info: info)
        }
    }

    /// A usable access token, the way `SFOAuthCoordinator.authenticate` decides: the stored token
    /// while it is valid; else a refresh when there is a refresh token; else — only when
    /// `interactive` is true — the browser sign-in. The first two are `sfauth token`'s own path
    /// (`TokenSource` with `configuration.tokenOptions`): the same leeway and assumed lifetime, and
    /// one refresh per account across threads and processes. The delegate hears a refresh (auth type
    /// `.refresh`) or a browser sign-in like `authenticate()`; reusing a stored token is silent.
    ///
    /// With `resource`, the token is the one of the account bound to that protected resource
    /// (`AccountResolver.identifier(boundTo:)`), and a sign-in — for a coordinator configured for
    /// that resource (`ClientConfiguration.resource`, from `ResourceSignIn`) — binds a new one.
    ///
    /// - Parameters:
    ///   - account: the stored account (identifier); default: the default account, or the one
    ///     bound to `resource`.
    ///   - resource: the protected resource the token is for (RFC 8707); `nil` for any.
    ///   - interactive: whether a browser sign-in may happen when nothing else works. Default: `true`.
    /// - Throws: `OAuthError.loginRequired` (non-interactive, or the server rejected the refresh
    ///   token — the delegate's `didFail` says so too), `.configuration` when the coordinator is
    ///   configured for another resource than `resource`, or any error of the refresh or sign-in.
    public func accessToken(account: String? = nil, resource: String? = nil, interactive: Bool = true) async throws(OAuthError) -> OAuthCredentials {
        if let resource, let configured = configuration.client.resource, !ProtectedResource.isSame(configured, resource) {
            throw .configuration("this sign-in is configured for the resource \(configured), not \(TerminalText.escaped(resource))")
        }
        guard let store else { return try await authenticate() }
        let source = TokenSource(store: store, httpClient: httpClient, options: configuration.tokenOptions, clock: clock)
        let stored: OAuthCredentials?
        if let account {
            stored = try store.load(identifier: account)
        } else if let resource {
            stored = try AccountResolver(store: store).identifier(boundTo: resource).flatMap { identifier throws(OAuthError) in
                try store.load(identifier: identifier)
            }
            if stored == nil, !interactive || configuration.client.resource == nil {
                throw .loginRequired(
                    Problem("No account is bound to \(TerminalText.escaped(resource)).", remedy: .signInToResource(resource, scopes: nil)))
            }
        } else {
            stored = try store.loadDefault()
        }
        if let stored, source.isUsable(stored) { return stored }

        if let stored, source.canRenew(stored) {
            let info = AuthInfo(authType: .refresh)
            delegate?.oauthCoordinator(self, willBeginAuthenticationWith: info)
            do {
                let refreshed = try await source.credentials(account: stored.identifier)
                delegate?.oauthCoordinator(self, didAuthenticate: refreshed, info: info)
                return refreshed
            } catch {
                delegate?.oauthCoordinator(self, didFailWith: error, info: info)
                guard interactive, error.recovery == .logInAgain else { throw error }
            }
        }
        guard interactive else {
            throw .loginRequired(
                Problem(
                    "A browser sign-in is needed\(stored.map { " for \($0.displayLabel)" } ?? "").",
                    remedy: stored.map(Remedy.signIn) ?? .signIn(account: nil, grant: nil)))
        }
        return try await authenticate()
    }

    /// Stops a flow in progress: the listener closes and `authenticate()` throws `OAuthError.cancelled`.
    /// The same as cancelling the task that awaits it. Safe to call from any thread, at any time; a
    /// `cancel()` when no flow runs has no effect on a later one.
    public func cancel() {
        state.withLock { $0.flow }?.cancel()
    }

    /// Runs one flow — the delegate's `willBegin`, `body`, then `didAuthenticate` or `didFail` —
    /// in a task of its own that `cancel()` cancels, so a flow has one cancellation path: task
    /// cancellation, whether it comes from `cancel()` or from the caller's task.
    func runFlow(
        info: AuthInfo,
        _ body: @escaping @Sendable (OAuthCoordinator, AuthInfo) async throws(OAuthError) -> OAuthCredentials
    )
        async throws(OAuthError) -> OAuthCredentials
    {
        // Created under the lock, so it is registered before it can run: a cancel() from the
        // delegate's willBegin (which waits for the lock) finds it.
        let flow = state.withLock { state in
            let flow = Task { [self] () async throws -> OAuthCredentials in
                delegate?.oauthCoordinator(self, willBeginAuthenticationWith: info)
                do throws(OAuthError) {
                    let credentials = try await body(self, info)
                    delegate?.oauthCoordinator(self, didAuthenticate: credentials, info: info)
                    return credentials
                } catch {
                    delegate?.oauthCoordinator(self, didFailWith: error, info: info)
                    throw error
                }
            }
            state.flow = flow
            return flow
        }
        defer { state.withLock { if $0.flow == flow { $0.flow = nil } } }
        let result = await withTaskCancellationHandler {
            await flow.result
        } onCancel: {
            flow.cancel()
        }
        switch result {
        case .success(let credentials): return credentials
        case .failure(let error as OAuthError): throw error
        case .failure: throw .cancelled  // not reached: the body throws only OAuthError
        }
    }

    // MARK: - The flow

    private func runBrowserFlow(info: AuthInfo) async throws(OAuthError) -> OAuthCredentials {
        try configuration.server.validate()
        try configuration.client.validate()

        // Bind first: the redirect URI names the port actually bound (RFC 8252 §7.3).
        let redirect = configuration.client.redirect
        let listener = try LoopbackListener(
            configuration: .init(
                host: redirect.host, port: redirect.port, callbackPath: redirect.path,
                app: configuration.app))
        defer { listener.cancel() }
        if Task.isCancelled { throw .cancelled }

        var random = SystemRandomNumberGenerator()
        let request = AuthorizationRequest(
            server: configuration.server, client: configuration.client,
            redirectURI: listener.redirectURI, using: &random)
        let launch = present(request.url, redirectURI: listener.redirectURI, info: info)
        // The launch is not waited for: a browser command that has not exited yet (it may be the
        // browser itself, or wait for our own answer to its redirect) must not hold the redirect up.
        // Its failure is still said — unless the redirect came first, which proves a browser ran.
        defer { launch?.finishFlow() }

        let outcome = try await waitForRedirect(on: listener, for: request)

        switch outcome {
        case .denied(let serverError):
            let error = OAuthError.authorizationDenied(serverError)
            await listener.finish(.failed(message: error.description))
            throw error
        case .rejected(let reason):
            // The listener answers rejected requests itself and keeps waiting; it never returns one.
            await listener.finish(.failed(message: reason))
            throw .invalidServerResponse("the redirect was not usable: \(reason)")
        case .authorized(let response):
            do {
                try response.checkIssuer(of: configuration.server)
            } catch {
                await listener.finish(.failed(message: error.description))
                throw error
            }
            delegate?.oauthCoordinator(self, didReceiveAuthorizationCodeWith: info)
            do {
                var credentials = try await exchange(response, for: request)
                let kept = try await identifyAndKeep(&credentials)
                await listener.finish(.signedIn(detail: credentials.username ?? credentials.identifier))
                await revokeReplaced(kept)
                return credentials
            } catch {
                await listener.finish(.failed(message: error.description))
                throw error
            }
        }
    }

    /// What every sign-in does once it has tokens: asks who signed in (when configured; best
    /// effort), then keeps the credentials by the store's account rules (`AccountBook.keep`).
    /// - Returns: what was kept and what it replaced (nothing stored without a store).
    func identifyAndKeep(_ credentials: inout OAuthCredentials) async throws(OAuthError) -> AccountBook.Kept {
        if configuration.fetchIdentity { await addIdentity(to: &credentials) }
        guard let store else { return AccountBook.Kept(credentials: credentials, replaced: nil) }
        // Signing in again to one account: someone else's sign-in is kept, but takes nothing from it.
        let meant = configuration.account.flatMap { try? store.load(identifier: $0) }
        let someoneElse = meant.flatMap { meant in
            credentials.isIdentified && meant.isIdentified && credentials.identifier != meant.identifier ? meant : nil
        }
        let kept = try await AccountBook(store: store).keep(
            credentials, alias: someoneElse == nil ? configuration.alias : nil, makeDefault: configuration.makeDefault && someoneElse == nil,
            replacing: configuration.account)
        credentials = kept.credentials
        if let someoneElse {
            let signedIn = credentials.username ?? credentials.displayLabel
            let meant = someoneElse.username ?? someoneElse.displayLabel
            throw .loginRequired(
                Problem(
                    "The server signed in \(signedIn), not \(meant): that sign-in was kept as an account of its own "
                        + "(the default did not change), and \(someoneElse.selectableName) still needs a sign-in as \(meant).",
                    remedy: .signIn(someoneElse)))
        }
        return kept
    }

    /// Best effort: the refresh token a sign-in replaced should not stay alive at the server.
    func revokeReplaced(_ kept: AccountBook.Kept) async {
        guard let store else { return }
        await AccountBook(store: store).revokeReplaced(kept, with: TokenRevoker(httpClient: httpClient))
    }

    /// Fills in who signed in from the server's identity endpoint; a failure leaves the credentials as they are.
    private func addIdentity(to credentials: inout OAuthCredentials) async {
        guard let identity = try? await IdentityFetcher(httpClient: httpClient).fetch(for: credentials) else { return }
        credentials.username = identity.username ?? credentials.username
        credentials.displayName = identity.displayName ?? credentials.displayName
        credentials.email = identity.email ?? credentials.email
        credentials.organizationId = identity.organizationId ?? credentials.organizationId
        if credentials.userId == nil, let userId = identity.userId {
            credentials.userId = userId
            credentials.identifier = AccountIdentifier.make(
                server: credentials.server, userId: userId, clientId: credentials.clientId,
                obtainedBy: credentials.obtainedBy, resource: credentials.resource)
        }
    }

    /// Hands the URL to the delegate, then starts the browser launcher in the background and
    /// returns at once; a launch failure is not fatal, and is said when it is known (`nil`: no
    /// browser is launched).
    private func present(_ url: String, redirectURI: String, info: AuthInfo) -> BrowserLaunch? {
        let presentation = delegate?.oauthCoordinator(self, willOpenBrowserAt: url, redirectURI: redirectURI, info: info) ?? .openBrowser
        guard presentation == .openBrowser else { return nil }
        guard let launcher = configuration.browserLauncher else {
            notifyBrowserNotOpened(url, reason: .browserDisabled, info: info)
            return nil
        }
        let launch = BrowserLaunch()
        Task { [self] in
            guard let failure = await Self.open(url, with: launcher), launch.flowIsRunning() else { return }
            notifyBrowserNotOpened(url, reason: .launchFailed(failure), info: info)
        }
        return launch
    }

    /// The redirect, from the listener or pasted by the person (when `pastedRedirects` is set):
    /// one wait, first one wins and the other is cancelled. When the paste wins, the listener is
    /// closed by that cancellation, so `finish` has nothing to answer and just returns.
    private func waitForRedirect(on listener: LoopbackListener, for request: AuthorizationRequest) async throws(OAuthError) -> CallbackOutcome {
        do {
            return try await waitForAnyRedirect(on: listener, for: request)
        } catch .timedOut(let seconds, let hint) where request.client.scopes.isEmpty {
            // Some servers (Google, Glewlwyd) refuse a request without a scope, and the browser shows
            // their error page instead of coming back.
            throw .timedOut(
                seconds: seconds,
                hint: Problem(
                    hint.text + " No scope was asked for, and some servers refuse a request without one.", remedy: .askForScopes))
        }
    }

    /// The redirect from the listener, or a pasted one, whichever comes first.
    private func waitForAnyRedirect(on listener: LoopbackListener, for request: AuthorizationRequest) async throws(OAuthError) -> CallbackOutcome {
        let timeout = configuration.timeout
        guard let source = configuration.pastedRedirects else {
            return try await listener.waitForCallback(expectedState: request.state, timeout: timeout)
        }
        do {
            return try await withThrowingTaskGroup(of: CallbackOutcome.self) { group in
                group.addTask { try await listener.waitForCallback(expectedState: request.state, timeout: timeout) }
                group.addTask { try await PastedRedirect.wait(from: source, for: request) }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw OAuthError.cancelled }
                return first
            }
        } catch let error as OAuthError {
            throw error
        } catch {
            throw .cancelled  // the paste's CancellationError: the whole wait was cancelled
        }
    }

    /// Runs the launcher, which may block for seconds (it waits to see whether the browser command
    /// fails), on a thread of its own rather than one of Swift's few cooperative threads.
    /// Returns the failure message, or `nil` when the browser was opened.
    private static func open(_ url: String, with launcher: any BrowserLauncher) async -> String? {
        await withCheckedContinuation { continuation in
            do {
                try DetachedThread.start {
                    do {
                        try launcher.open(url)
                        continuation.resume(returning: nil)
                    } catch {
                        continuation.resume(returning: "\(error)")
                    }
                }
            } catch {
                continuation.resume(returning: "no thread could be started to launch the browser (\(error))")
            }
        }
    }

    private func notifyBrowserNotOpened(_ url: String, reason: BrowserNotOpenedReason, info: AuthInfo) {
        if let delegate {
            delegate.oauthCoordinator(self, browserNotOpenedFor: url, reason: reason, info: info)
        } else {
            // Without a delegate the user must still see the URL: use the default implementation's output.
            SilentDelegate().oauthCoordinator(self, browserNotOpenedFor: url, reason: reason, info: info)
        }
    }

    /// Exchanges the code (RFC 6749 §4.1.3) and turns the response into credentials.
    private func exchange(_ response: AuthorizationResponse, for request: AuthorizationRequest) async throws(OAuthError) -> OAuthCredentials {
        let (httpResponse, client) = try await httpClient.sendAuthenticating(request.client) { client in
            TokenRequest.authorizationCode(response, for: request, client: client)
        }
        let tokens = try TokenResponse.decode(httpResponse, endpoint: request.server.tokenEndpoint)
        var credentials = OAuthCredentials(response: tokens, request: request, now: clock.now())
        if client.authentication == .basic { credentials.clientAuthentication = .basic }
        // RFC 9207 with a server given only by its endpoints: remember the issuer it named, and hold
        // later sign-ins to this account to it (see `AuthorizationResponse.checkIssuer(of:)`).
        if request.server.issuer == nil { credentials.authorizationResponseIssuer = response.issuer }
        credentials.recipe = SignInRecipe(client: request.client, grant: .browser)
        // OIDC Core §3.1.3.7, with this login's nonce; the account is named after the validated claims.
        try await idTokenValidator.accept(
            tokens, into: &credentials, nonce: request.nonce,
            codeFlowAskedForOpenID: request.client.requestsOpenID, now: clock.now())
        return credentials
    }
}

/// A browser launch running beside the wait for the redirect: once the flow is over, its failure
/// is no longer said (a redirect arrived, so some browser did open the page).
final class BrowserLaunch: Sendable {
    private let running = Mutex(true)

    /// Whether the flow still waits; the failure is said only then.
    func flowIsRunning() -> Bool { running.withLock { $0 } }

    /// The flow is over.
    func finishFlow() { running.withLock { $0 = false } }
}

/// A weak reference that can live inside the coordinator's lock.
private struct WeakDelegate: @unchecked Sendable {
    weak var value: (any OAuthCoordinatorDelegate)?
    init(_ value: (any OAuthCoordinatorDelegate)? = nil) { self.value = value }
}

/// A delegate with only the default implementations.
private final class SilentDelegate: OAuthCoordinatorDelegate {}
