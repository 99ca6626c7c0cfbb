import CredentialProtocols
import FoundationEssentials
import Glibc
import SFAuth
import SFAuthStore

/// Everything a command takes from the process it runs in, gathered once by the program's entry
/// point and handed to the command that runs: sfauth's environment variables, what the terminal
/// session is like, and the path people run sfauth by. From these it makes what the commands share
/// — the credential store, the HTTP client, the token source, a child's environment, the client
/// secret — each when a command asks for it, so that a command fails only on the variables it
/// actually uses. No command reads `ProcessInfo` or passes the raw environment around.
///
/// (After gh's `LoginOptions{IO, HttpClient, Config, Browser}`, handed to `loginRun(opts)`.)
package struct CommandContext: Sendable {
    /// sfauth's variables (`SFAUTH_*`) and the rest of the environment they come from.
    package let settings: EnvironmentSettings
    /// What kind of session this is: a display, SSH, WSL, a terminal on standard input.
    package let session: TerminalSession
    /// The absolute path of the `sfauth` people run, which kubeconfig and git configuration should
    /// call (see `ExecutablePath`).
    package let executablePath: String

    /// A context for `environment`.
    ///
    /// - Parameters:
    ///   - environment: the process environment.
    ///   - session: the terminal session. Default: read from `environment` and this process.
    ///   - executablePath: the path people run sfauth by. Default: `ExecutablePath.current()`.
    package init(environment: [String: String], session: TerminalSession? = nil, executablePath: String? = nil) {
        settings = EnvironmentSettings(app: .sfauth, environment: environment)
        self.session = session ?? TerminalSession(environment: environment)
        self.executablePath = executablePath ?? ExecutablePath.current()
    }

    /// The process environment, for the few readers of other programs' variables (`BROWSER`,
    /// `KUBERNETES_EXEC_INFO`, proxies, `PATH`).
    package var environment: [String: String] { settings.environment }

    // MARK: - Storage

    /// The credential store of the stored accounts (every command but `login`): accounts keep their
    /// refresh tokens where they are, and the keyring is contacted only when one is needed.
    /// (`SFAUTH_STORAGE`, `SFAUTH_HOME`.)
    package func accountStore() throws(OAuthError) -> FileCredentialStore {
        try settings.storageMode().store(directory: try settings.credentialsDirectory(app: .sfauth), signingIn: false).store
    }

    /// The store a new sign-in keeps its credentials in, with `storage` (`--storage`) over
    /// `SFAUTH_STORAGE`; `notice` says why no keyring could be used when `auto` fell back to files.
    package func signInStore(storage: StorageMode?) throws(OAuthError) -> (store: FileCredentialStore, notice: String?) {
        let mode = if let storage { storage } else { try settings.storageMode() }
        return try mode.store(directory: try settings.credentialsDirectory(app: .sfauth), signingIn: true)
    }

    // MARK: - Network

    /// The HTTP client with sfauth's limits, which `SFAUTH_HTTP_TIMEOUT` (seconds for a whole request;
    /// the connection gets at most that) shortens or lengthens — for slow networks, and for scripts
    /// that would rather fail fast than wait half a minute.
    package func httpClient(connectTimeout: Duration = .seconds(10), totalTimeout: Duration = .seconds(30)) throws(OAuthError) -> CurlHTTPClient {
        var options = CurlHTTPClient.Options(connectTimeout: connectTimeout, totalTimeout: totalTimeout)
        if let seconds = try settings.httpTimeout() {
            options.totalTimeout = .milliseconds(Int64(seconds * 1000))
            options.connectTimeout = min(options.connectTimeout, options.totalTimeout)
        }
        return CurlHTTPClient(options: options)
    }

    // MARK: - Tokens

    /// The accounts and the token source over them, as `SFAUTH_STORAGE`, `SFAUTH_HOME`,
    /// `SFAUTH_HTTP_TIMEOUT`, `SFAUTH_TOKEN_LEEWAY`, `SFAUTH_ASSUMED_TOKEN_LIFETIME` and
    /// `SFAUTH_CLIENT_SECRET` say.
    package func accounts() throws(OAuthError) -> StoredAccounts {
        let store = try accountStore()
        let source = TokenSource(store: store, httpClient: try httpClient(), options: try TokenSource.Options(settings: settings))
        return StoredAccounts(store: store, source: source)
    }

    /// A usable access token for `account` (`nil`: the default account): `SFAUTH_ACCESS_TOKEN` when
    /// it is set, else the account's stored token, renewed first when needed.
    ///
    /// - Parameters:
    ///   - account: what the user typed after `--account`: alias, username, email or identifier.
    ///   - forceRefresh: renew even if the stored token looks valid.
    ///   - resource: the protected resource the token is for (`--resource`): the account bound to it.
    package func accessToken(account: String?, resource: String? = nil, forceRefresh: Bool = false) async throws(OAuthError) -> IssuedToken {
        try await accessToken(account: account, resource: resource, wanted: WantedToken(target: TokenTarget(), forceRefresh: forceRefresh))
    }

    /// A usable access token for `account` as `wanted` says: the account's own (as above), or one for
    /// a per-call target obtained from its sign-in, lasting `--min-valid` where the server allows.
    ///
    /// `resource` picks the account bound to it (`sfauth login --resource`); with an `account` that
    /// is not bound to it, it is a per-call target of that account instead.
    package func accessToken(account: String?, resource: String?, wanted: WantedToken) async throws(OAuthError) -> IssuedToken {
        var perCallResource = false
        // (`token --resource URL` alone picks the bound account: no store is opened for that here.)
        if let resource, account != nil || !TokenTarget.isWebResource(resource) {
            perCallResource = try isPerCall(resource, account: account, store: try accountStore())
        }
        if wanted.isPlain && !perCallResource {
            if !wanted.forceRefresh, let usable = usableToken(account: account, resource: resource) { return usable }
            if let supplied = settings.suppliedToken { return IssuedToken(supplied) }
            let accounts = try accounts()
            return try await accounts.token(
                for: try accounts.store.identifier(selectedBy: account, resource: resource), forceRefresh: wanted.forceRefresh)
        }
        if let supplied = settings.suppliedToken {
            guard wanted.target.isEmpty && !wanted.forceExchange && resource == nil else {
                throw .configuration(
                    "\(settings.name("ACCESS_TOKEN")) is set: a token for another scope, audience or resource needs a stored account; unset it")
            }
            return IssuedToken(supplied)
        }
        let accounts = try accounts()
        var target = wanted.target
        let identifier: String?
        if let resource, perCallResource {
            identifier = try accounts.store.identifier(selectedBy: account)
            try TokenTarget.requireValidResource(resource)
            target.resource = resource
        } else {
            identifier = try accounts.store.identifier(selectedBy: account, resource: resource)
        }
        if target.isEmpty && wanted.forceExchange {
            throw .configuration("--exchange needs --audience, --resource or --scope: what the token is exchanged for")
        }
        if target.isEmpty {
            let credentials = try await accounts.source.credentials(
                account: identifier, forceRefresh: wanted.forceRefresh, minimumValidity: wanted.minimumValidity)
            return IssuedToken(credentials, assumedLifetime: accounts.source.options.assumedLifetime)
        }
        let discovery = DiscoveryClient(httpClient: try httpClient(), cacheDirectory: DiscoveryClient.cacheDirectory(environment: environment))
        let targeted = try await accounts.source.token(
            for: target, account: identifier, forceExchange: wanted.forceExchange, forceRenewal: wanted.forceRefresh,
            minimumValidity: wanted.minimumValidity
        ) { credentials in
            guard let issuer = credentials.server.issuer else { return false }
            return (try? await discovery.discover(issuer: issuer))?.offersTokenExchange ?? false
        }
        return IssuedToken(targeted.token, of: targeted.credentials, assumedLifetime: accounts.source.options.assumedLifetime)
    }

    /// Whether `--resource` asks `account` (`nil`: the default) for a per-call token: the account
    /// named is not bound to it, or it is no web URL (Entra's `api://…`), to which no account is
    /// bound. Otherwise it picks the account bound to it.
    package func isPerCall(_ resource: String, account: String?, store: FileCredentialStore) throws(OAuthError) -> Bool {
        guard TokenTarget.isWebResource(resource) else { return true }
        guard let account else { return false }
        return !(try store.isBound(account, to: resource))
    }

    /// What `--min-valid` makes a command say on standard error about `token`: that it does not last
    /// as long as asked (the server's tokens do not live that long); `nil` otherwise.
    package func minimumValidityNotice(for token: IssuedToken, wanted: WantedToken) -> String? {
        wanted.shortfall(of: token, now: Date()).map { "sfauth: \($0)." }
    }

    /// The token to hand out as it is, found exactly as the front end finds it (`StoredTokenLookup`:
    /// a supplied token, else the stored token of `account` while usable); `nil` when only the
    /// token source can say more — renew it, or explain why not.
    package func usableToken(account: String?, resource: String? = nil) -> IssuedToken? {
        guard case .usable(let token) = StoredTokenLookup.lookUp(account: account, resource: resource, settings: settings, app: .sfauth, now: Date())
        else { return nil }
        return token
    }

    /// What `sfauth token` says on standard error about `token` now — that the account's refresh
    /// token expires within 7 days, once a day (`SignInReminder`, as the front end says it) — or `nil`.
    package func signInReminder(for token: IssuedToken) -> String? {
        SignInReminder.line(for: token, settings: settings, app: .sfauth, now: Date())
    }

    /// The client secret of a confidential client (`SFAUTH_CLIENT_SECRET`); never stored.
    package var clientSecret: String? { settings.clientSecret }

    /// The environment for a child process (the browser, `sfauth exec`'s command): without the
    /// client secret, a supplied access token, and the token `sfauth token --env` exports.
    package var childEnvironment: [String: String] {
        ChildEnvironment.without(settings.secretVariables + [TokenVariables.accessToken], in: environment)
    }
}

/// The stored accounts and the token source over them: what every command that hands out a
/// token shares (`token`, `exec`, `request`, `export`, `kube-credential`, `git-credential`).
package struct StoredAccounts: Sendable {
    /// The credential store.
    package let store: FileCredentialStore
    /// Reuse → refresh, one refresh per account across processes.
    package let source: TokenSource

    /// A usable token of `identifier` (`nil`: the default account), renewed first when needed.
    package func token(for identifier: String?, forceRefresh: Bool = false) async throws(OAuthError) -> IssuedToken {
        let credentials = try await source.credentials(account: identifier, forceRefresh: forceRefresh)
        return IssuedToken(credentials, assumedLifetime: source.options.assumedLifetime)
    }
}

extension FileCredentialStore {
    /// The identifier of the account `name` selects — what the user typed after `--account`:
    /// alias, username, email or identifier (see `AccountResolver`); `nil` for no name (the default
    /// account).
    package func identifier(selectedBy name: String?) throws(OAuthError) -> String? {
        guard let name else { return nil }
        return try AccountResolver(store: self).identifier(for: name)
    }

    /// The identifier of the account `name` selects, as `identifier(selectedBy:)` — or, with
    /// `resource` (`--resource URL`), of the account bound to that protected resource.
    ///
    /// - Throws: `OAuthError.loginRequired` with the `sfauth login --resource` command when no
    ///   account is bound to `resource`; `.configuration` when the account named is bound to
    ///   another resource (or to none).
    package func identifier(selectedBy name: String?, resource: String?) throws(OAuthError) -> String? {
        guard let resource else { return try identifier(selectedBy: name) }
        try ProtectedResource.requireValid(resource)
        if let name {
            let identifier = try AccountResolver(store: self).identifier(for: name)
            let bound = try load(identifier: identifier)?.resource
            guard let bound, ProtectedResource.isSame(bound, resource) || ProtectedResource.covers(resource, resource: bound) else {
                throw .configuration(
                    "\(TerminalText.escaped(name)) is \(bound.map { "bound to \($0)" } ?? "not bound to a resource"), not to \(TerminalText.escaped(resource)); leave out --account or --resource"
                )
            }
            return identifier
        }
        guard let identifier = try AccountResolver(store: self).identifier(boundTo: resource) else {
            throw .loginRequired(
                Problem("No account is bound to \(TerminalText.escaped(resource)).", remedy: .signInToResource(resource, scopes: nil)))
        }
        return identifier
    }

    /// Whether the account `name` selects is bound to `resource` (or to a resource that covers it).
    package func isBound(_ name: String, to resource: String) throws(OAuthError) -> Bool {
        let identifier = try AccountResolver(store: self).identifier(for: name)
        guard let bound = try load(identifier: identifier)?.resource else { return false }
        return ProtectedResource.isSame(bound, resource) || ProtectedResource.covers(resource, resource: bound)
    }

    /// The account a helper's configuration is to name — the one `name` selects, else the default
    /// — with its identifier, which no alias can take over later (`setup-git`, `kubeconfig`).
    package func accountForConfiguration(named name: String?) throws(OAuthError) -> OAuthCredentials {
        guard let credentials = try credentials(of: try identifier(selectedBy: name)) else {
            throw .loginRequired(
                Problem(
                    "Not signed in: no account is stored, and the configuration names one.",
                    remedy: .signIn(account: nil, grant: nil)))
        }
        return credentials
    }

    /// The stored credentials of `identifier` (`nil`: the default account), as they are.
    package func credentials(of identifier: String?) throws(OAuthError) -> OAuthCredentials? {
        if let identifier { return try load(identifier: identifier) }
        return try loadDefault()
    }
}
