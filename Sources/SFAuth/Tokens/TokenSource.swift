import FoundationEssentials
import SFAuthCore

/// Hands out a usable access token: the stored one while it is valid, else a refreshed one
/// (after golang.org/x/oauth2's `ReuseTokenSource`). Written once, used by `sfauth token` and by
/// `OAuthCoordinator`.
///
/// At most one refresh per account is in flight, across threads and processes: the refresh runs
/// under the account's lock, and whoever waited for the lock first re-reads the store and adopts
/// the token another process just stored instead of refreshing again — which servers that rotate
/// refresh tokens and revoke the whole family on reuse (Salesforce, django-oauth-toolkit) demand.
public struct TokenSource: Sendable {
    /// When tokens count as expired, and what renews them besides a refresh token.
    public struct Options: Sendable {
        /// Refresh this many seconds before the expiry. Default: 60.
        public var leeway: TimeInterval
        /// How long an access token is assumed to live when the server did not say (Salesforce sends
        /// no `expires_in`; its default session timeout is 2 hours). Default: 7200 s.
        public var assumedLifetime: TimeInterval
        /// The client secret that lets an account signed in with the client credentials grant get a
        /// new token by itself (that grant issues no refresh token, and the secret is never stored).
        /// Default: `nil`.
        public var clientSecret: String?

        /// Creates options.
        public init(
            leeway: TimeInterval = TokenFreshness.defaultLeeway,
            assumedLifetime: TimeInterval = TokenFreshness.defaultAssumedLifetime, clientSecret: String? = nil
        ) {
            self.leeway = leeway
            self.assumedLifetime = assumedLifetime
            self.clientSecret = clientSecret
        }

        /// The defaults, with what the tool's environment variables say (`<PREFIX>_TOKEN_LEEWAY`,
        /// `<PREFIX>_ASSUMED_TOKEN_LIFETIME`, `<PREFIX>_CLIENT_SECRET`).
        public init(settings: EnvironmentSettings) throws(OAuthError) {
            let clientSecret = settings.clientSecret
            let freshness = try TokenFreshness(settings: settings)
            self.init(leeway: freshness.leeway, assumedLifetime: freshness.assumedLifetime, clientSecret: clientSecret)
        }

        /// When stored tokens can be used as they are.
        public var freshness: TokenFreshness { TokenFreshness(leeway: leeway, assumedLifetime: assumedLifetime) }
    }

    let store: any CredentialStore
    let httpClient: any HTTPClient
    /// When tokens count as expired, and what renews them besides a refresh token.
    public let options: Options
    let clock: any AuthClock

    /// Creates a token source. The HTTP client is used only when a refresh is needed (`CurlHTTPClient`
    /// loads libcurl on its first request, so a valid stored token costs no library loading).
    ///
    /// - Parameters:
    ///   - store: where the account's credentials are read and the refreshed ones stored.
    ///   - httpClient: sends refresh requests. Default: `CurlHTTPClient()`.
    ///   - options: the leeway, assumed lifetime and client secret. Default: `Options()`.
    ///   - clock: the time expiry is judged by. Default: `SystemClock()`. (Waiting for another
    ///     process's refresh is the store's: see `FileCredentialStore.clock`.)
    public init(
        store: any CredentialStore, httpClient: any HTTPClient = CurlHTTPClient(), options: Options = Options(),
        clock: any AuthClock = SystemClock()
    ) {
        self.store = store
        self.httpClient = httpClient
        self.options = options
        self.clock = clock
    }

    /// Whether `credentials` can be used as they are.
    public func isUsable(_ credentials: OAuthCredentials) -> Bool {
        options.freshness.isUsable(credentials, at: clock.now())
    }

    /// Credentials with a usable access token for `account` (default: the default account).
    ///
    /// - Parameters:
    ///   - account: the account's identifier; `nil` (the default) for the default account.
    ///   - forceRefresh: refresh even if the stored token looks valid (e.g. the API just
    ///     rejected it).
    ///   - minimumValidity: renew first unless the token stays valid this long (`--min-valid`), as
    ///     far as the server's token lifetime allows (`TokenFreshness.renewalMargin`). Default: `nil`.
    /// - Throws: `OAuthError.loginRequired` when nothing is stored, the account needs a new login,
    ///   or there is no refresh token; `.network`/`.invalidServerResponse` when a refresh could not
    ///   be completed (nothing stored changes); `.tokenRequestRejected` for other refusals;
    ///   `.idTokenRejected` when the refreshed ID token fails OIDC Core §12.2 (only the rotated
    ///   refresh token is stored then).
    public func credentials(account: String? = nil, forceRefresh: Bool = false, minimumValidity: TimeInterval? = nil) async throws(OAuthError)
        -> OAuthCredentials
    {
        let stored = try load(account)
        if !forceRefresh && isUsable(stored, minimumValidity: minimumValidity) { return stored }
        try requireRefreshable(stored)

        let lock = try await store.lock(account: stored.identifier)
        defer { withExtendedLifetime(lock) {} }
        return try await renewedUnderLock(stored, forceRefresh: forceRefresh, minimumValidity: minimumValidity)
    }

    /// Whether `credentials` can be used as they are and stay valid `minimumValidity` seconds
    /// (`--min-valid`; as far as the server's token lifetime allows: `TokenFreshness.renewalMargin`).
    public func isUsable(_ credentials: OAuthCredentials, minimumValidity: TimeInterval?) -> Bool {
        options.freshness.isUsable(credentials, at: clock.now(), minimumValidity: minimumValidity)
    }

    /// The account's own token renewed, with its lock held: `stored` is what was read before the
    /// lock was taken.
    func renewedUnderLock(_ stored: OAuthCredentials, forceRefresh: Bool, minimumValidity: TimeInterval?) async throws(OAuthError)
        -> OAuthCredentials
    {
        // Another thread or process may have refreshed while we waited for the lock: adopt its token
        // unless it has actually expired (or would not last as long as asked). Within the leeway is
        // good enough here: refreshing again would retire the token the other process just handed out.
        let current = try load(stored.identifier)
        let lastsLongEnough = minimumValidity == nil || isUsable(current, minimumValidity: minimumValidity)
        if current.accessToken != stored.accessToken && !current.needsLogin && lastsLongEnough
            && !current.isExpired(at: clock.now(), leeway: 0, assumedLifetime: options.assumedLifetime)
        {
            return current
        }
        if !forceRefresh && isUsable(current, minimumValidity: minimumValidity) { return current }
        try requireRefreshable(current)
        return try await refresh(current)
    }

    // MARK: - Steps

    func load(_ account: String?) throws(OAuthError) -> OAuthCredentials {
        if let account {
            guard let credentials = try store.load(identifier: account) else {
                throw .loginRequired(Problem("\(account) is no longer stored.", remedy: .signIn(account: nil, grant: nil)))
            }
            return credentials
        }
        if let credentials = try store.loadDefault() { return credentials }
        let stored = try store.identifiers()
        guard stored.isEmpty else {
            // Accounts exist, but none is the default: that is a choice to make, not a sign-in.
            throw .configuration(
                Problem(
                    "no account is the default, and \(stored.count) account\(stored.count == 1 ? " is" : "s are") stored",
                    remedy: .chooseDefaultAccount))
        }
        throw .loginRequired(Problem("Not signed in: no account is stored.", remedy: .signIn(account: nil, grant: nil)))
    }

    func requireRefreshable(_ credentials: OAuthCredentials) throws(OAuthError) {
        if credentials.needsLogin {
            throw .loginRequired(
                Problem(
                    "The sign-in of \(credentials.displayLabel) is no longer valid (the server rejected its refresh token).",
                    remedy: .signIn(credentials)))
        }
        guard canRenew(credentials) else {
            let state = isExpiredNow(credentials) ? "has expired" : "cannot be renewed"
            if credentials.obtainedBy == .clientCredentials, options.clientSecret != nil {
                // A secret bound to another client never goes to this account's server.
                throw .loginRequired(
                    Problem(
                        "The access token of \(credentials.displayLabel) \(state), and the client secret given is not the one it signed in with, so it is not sent to its server.",
                        remedy: .provideClientSecret(account: credentials.selectableName)))
            }
            if credentials.obtainedBy == .clientCredentials {
                throw .loginRequired(
                    Problem(
                        "The access token of \(credentials.displayLabel) \(state), and renewing it needs the client secret.",
                        remedy: .provideClientSecret(account: credentials.selectableName)))
            }
            throw .loginRequired(
                Problem(
                    "The access token of \(credentials.displayLabel) \(state) and there is no refresh token.",
                    remedy: .signIn(credentials)))
        }
    }

    private func isExpiredNow(_ credentials: OAuthCredentials) -> Bool {
        credentials.isExpired(at: clock.now(), leeway: options.leeway, assumedLifetime: options.assumedLifetime)
    }

    /// One refresh grant (RFC 6749 §6), under the account's lock. The new credentials — with a rotated
    /// refresh token — are stored before they are returned; a rejected refresh token marks the
    /// account as needing a login; a transient failure changes nothing.
    func refresh(_ credentials: OAuthCredentials) async throws(OAuthError) -> OAuthCredentials {
        let usedRefreshToken = try store.refreshToken(of: credentials)
        let sent: SentRefresh
        if let refreshToken = usedRefreshToken {
            sent = try await sendRefresh(of: credentials, refreshToken: refreshToken, parameters: nil)
        } else {
            sent = SentRefresh(
                response: try await httpClient.sendForOAuth(try await renewalRequest(for: credentials)), current: credentials,
                clientAuthentication: credentials.clientAuthentication)
        }
        let httpResponse = sent.response
        let current = sent.current
        let clientAuthentication = sent.clientAuthentication
        let response: TokenResponse
        do {
            response = try TokenResponse.decode(
                Self.readingEmptyRefusal(httpResponse, refreshing: usedRefreshToken != nil), endpoint: credentials.server.tokenEndpoint)
        } catch .tokenRequestRejected(let error) where error.rejectsTheGrant || Self.forgotRegisteredClient(error, of: credentials) {
            throw try signInRejected(error, of: credentials)
        }
        var refreshed = current.refreshed(with: response, now: clock.now(), sentRefreshToken: usedRefreshToken)
        refreshed.clientAuthentication = clientAuthentication
        // An account from before bindings were kept is bound to the secret that renewed it.
        if refreshed.clientSecretBinding == nil, refreshed.obtainedBy == .clientCredentials, let secret = options.clientSecret {
            refreshed.clientSecretBinding = ClientSecretBinding(secret: secret)
        }
        if let idToken = response.idToken, idToken != credentials.idToken {
            // OIDC Core §12.2. Only the rotated refresh token is kept (above) until the new ID token
            // passed: the new access token is used only then.
            try await IDTokenValidator(httpClient: httpClient).acceptRefreshed(idToken, of: credentials, now: clock.now())
        }
        try store.update(refreshed)
        return refreshed
    }

    /// The error to end with when the server refused the refresh token itself (or forgot the client
    /// it was issued to): the account is marked as needing a new sign-in first — unless the refusal
    /// only says that a refresh is running elsewhere.
    func signInRejected(_ error: OAuthServerError, of credentials: OAuthCredentials) throws(OAuthError) -> OAuthError {
        if error.description?.contains("already being processed") == true {
            // Salesforce: a refresh with this token is running elsewhere (another machine). Not our token's fault.
            return .invalidServerResponse(
                Problem("the server is already processing a refresh for \(credentials.displayLabel)", remedy: .tryAgainLater))
        }
        var rejected = credentials
        rejected.status = .loginRequired
        try store.update(rejected)
        let explanation = error.providerExplanation.map { " " + $0 } ?? ""
        return .loginRequired(
            Problem(
                "The sign-in of \(credentials.displayLabel) is no longer valid (\(error.summary)).\(explanation)", remedy: .signIn(credentials)))
    }

    /// A refresh grant's answer, and the account as it stands once a rotated refresh token in it
    /// was stored.
    struct SentRefresh {
        var response: HTTPResponse
        var current: OAuthCredentials
        var clientAuthentication: ClientAuthentication?
    }

    /// Sends a refresh grant for `credentials` with `refreshToken` — for the account's own token
    /// (`parameters` `nil`: its `resource`, if bound to one), or with a per-call target's
    /// `parameters` — and stores a rotated refresh token before anything else is read from the
    /// answer: a server that rotates refresh tokens has retired the old one the moment it answers.
    func sendRefresh(of credentials: OAuthCredentials, refreshToken: String, parameters: [(String, String)]?) async throws(OAuthError)
        -> SentRefresh
    {
        var client = ClientConfiguration(clientId: credentials.clientId, clientSecret: try renewalSecret(of: credentials))
        client.authentication = credentials.clientAuthentication ?? .post
        client.resource = credentials.resource
        let sent = try await httpClient.sendAuthenticating(client) { client in
            if let parameters {
                return TokenRequest.refresh(
                    refreshToken: refreshToken, tokenEndpoint: credentials.server.tokenEndpoint, client: client, parameters: parameters)
            }
            return TokenRequest.refresh(refreshToken: refreshToken, tokenEndpoint: credentials.server.tokenEndpoint, client: client)
        }
        var clientAuthentication = credentials.clientAuthentication
        if sent.client.authentication == .basic { clientAuthentication = .basic }
        var current = credentials
        if let rotated = TokenResponse.rotatedRefreshToken(in: sent.response), rotated != refreshToken {
            current.refreshToken = rotated
            // The old token's expiry is not the new one's; the answer, once read, may say it.
            current.refreshTokenExpiry = nil
            current = try store.update(current)
        }
        return SentRefresh(response: sent.response, current: current, clientAuthentication: clientAuthentication)
    }

    /// The request that renews `credentials` without a refresh token: a new JWT bearer assertion, or
    /// the client credentials grant with the secret in `options` when it is the one the account is
    /// bound to.
    private func renewalRequest(for credentials: OAuthCredentials) async throws(OAuthError) -> HTTPRequest {
        if let renewal = credentials.jwtBearerRenewal {
            return try await Self.renewalRequest(renewal, for: credentials, now: clock.now())
        }
        if credentials.obtainedBy == .clientCredentials, let secret = options.clientSecret, credentials.accepts(clientSecret: secret) {
            return TokenRequest.clientCredentials(
                tokenEndpoint: credentials.server.tokenEndpoint,
                client: ClientConfiguration(clientId: credentials.clientId, clientSecret: secret, scopes: credentials.scopes))
        }
        throw .loginRequired(
            Problem(
                "The access token of \(credentials.displayLabel) cannot be renewed: there is no refresh token.",
                remedy: .signIn(credentials)))
    }

    /// The client secret a refresh of `credentials` carries: the one kept with the account, else the
    /// one given in `options` when the account signed in with that very secret (its binding); `nil`
    /// for a public client. A secret bound to another client never goes to this account's server.
    func renewalSecret(of credentials: OAuthCredentials) throws(OAuthError) -> String? {
        if let kept = try store.clientSecret(of: credentials) { return kept }
        guard credentials.clientSecretBinding != nil, let given = options.clientSecret, credentials.accepts(clientSecret: given) else {
            return nil
        }
        return given
    }

    /// Whether the server refused the refresh because it no longer knows the client — one it
    /// registered for a protected resource's account (RFC 7591), which servers may forget: only a
    /// new sign-in (which registers again) helps.
    static func forgotRegisteredClient(_ error: OAuthServerError, of credentials: OAuthCredentials) -> Bool {
        credentials.resource != nil && error.code == "invalid_client"
    }

    /// Some servers refuse a refresh token with a bare `400` and no body (Glewlwyd, for a retired or
    /// revoked one) instead of RFC 6749 §5.2's `invalid_grant`. For a refresh grant the refresh
    /// token is the only thing that can be wrong, so such an answer is read as that error: only a
    /// new sign-in helps, and "try again later" would send the user round in circles.
    static func readingEmptyRefusal(_ response: HTTPResponse, refreshing: Bool) -> HTTPResponse {
        guard refreshing, response.status == 400, response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D })
        else { return response }
        let body = #"{"error":"invalid_grant","error_description":"the server refused the refresh token (HTTP 400 with an empty body)"}"#
        return HTTPResponse(status: 400, headers: ["content-type": "application/json"], body: Array(body.utf8))
    }

    /// Whether a new access token can be had for `credentials` without a person: a refresh token, a
    /// JWT bearer key, or (client credentials) the client secret in `options`.
    public func canRenew(_ credentials: OAuthCredentials) -> Bool {
        !credentials.needsLogin
            && (credentials.isRenewable
                || (credentials.obtainedBy == .clientCredentials && options.clientSecret.map(credentials.accepts(clientSecret:)) == true))
    }

    /// A JWT bearer request with a new assertion for an account signed in that way (RFC 7523 §2.1).
    private static func renewalRequest(
        _ renewal: JWTBearerRenewal, for credentials: OAuthCredentials,
        now: Date
    ) async throws(OAuthError) -> HTTPRequest {
        let signer: JWTAssertionSigner
        do {
            signer = try await JWTAssertionSigner(privateKeyFile: renewal.keyFile, keyID: renewal.keyID)
        } catch {
            throw .loginRequired(
                Problem("The access token of \(credentials.displayLabel) has expired and cannot be renewed: \(error).", remedy: .signIn(credentials)))
        }
        return try await signer.tokenRequest(
            username: renewal.subject, audience: renewal.audience, tokenEndpoint: credentials.server.tokenEndpoint,
            client: ClientConfiguration(clientId: credentials.clientId), now: now)
    }
}
