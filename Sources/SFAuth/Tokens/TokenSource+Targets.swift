import FoundationEssentials
import SFAuthCore

/// Per-call targets: a token for other scopes, another audience or another resource, obtained from
/// an account's sign-in without a new one (`TargetPlan`: a refresh asking for it, or a token
/// exchange) and kept in the account's record beside its own token, one per target, by the same
/// rules — one renewal at a time across processes under the account's lock, a rotated refresh
/// token stored first, the leeway at most half the token's lifetime.
extension TokenSource {
    /// A token for a target, and the account it came from.
    public struct TargetedCredentials: Sendable {
        /// The account, as stored once the token was obtained.
        public var credentials: OAuthCredentials
        /// The token for the target.
        public var token: TargetedToken
    }

    /// A usable token for `target` from `account`'s sign-in: the one kept from an earlier call while
    /// it is usable, else a new one.
    ///
    /// - Parameters:
    ///   - target: what the token is for; must not be empty.
    ///   - account: the account's identifier; `nil` for the default account.
    ///   - forceExchange: obtain it by token exchange only (`--exchange`).
    ///   - forceRenewal: obtain a new one even if the kept one looks valid.
    ///   - minimumValidity: renew first unless the token stays valid this long.
    ///   - offersExchange: whether the account's server offers token exchange (its metadata lists the
    ///     grant); asked only when the target could need it.
    /// - Throws: `OAuthError.tokenRequestRejected` when the server refused the target or gave a token
    ///   for something else (its `nextStep` names the sign-in that would grant it);
    ///   `.configuration` when the server offers no way to it; `.loginRequired` when the account
    ///   needs a new sign-in; `.network`/`.invalidServerResponse` as for a refresh.
    public func token(
        for target: TokenTarget, account: String? = nil, forceExchange: Bool = false, forceRenewal: Bool = false,
        minimumValidity: TimeInterval? = nil, offersExchange: @Sendable (OAuthCredentials) async -> Bool = { _ in false }
    ) async throws(OAuthError) -> TargetedCredentials {
        let stored = try load(account)
        if !forceRenewal, let kept = usableToken(for: target, in: stored, minimumValidity: minimumValidity) {
            return TargetedCredentials(credentials: stored, token: kept)
        }
        try requireRefreshable(stored)
        guard stored.hasRefreshToken else {
            throw .configuration(
                "\(stored.displayLabel) was signed in without a refresh token, so it cannot obtain tokens for \(target.summary); sign in with a grant that issues one"
            )
        }
        let mayExchange = forceExchange || target.audience != nil || target.resource != nil
        let serverExchanges = mayExchange && !TargetPlan.isEntra(stored.server) ? await offersExchange(stored) : false
        let plan = try TargetPlan.make(target: target, server: stored.server, offersExchange: serverExchanges, forceExchange: forceExchange)

        let lock = try await store.lock(account: stored.identifier)
        defer { withExtendedLifetime(lock) {} }
        // Another process may have obtained it while we waited.
        var current = try load(stored.identifier)
        if !forceRenewal, let kept = usableToken(for: target, in: current, minimumValidity: minimumValidity) {
            return TargetedCredentials(credentials: current, token: kept)
        }
        try requireRefreshable(current)

        var lastError: OAuthError?
        for route in plan.routes {
            do throws(OAuthError) {
                let obtained: TargetedToken
                switch route {
                case .refresh:
                    (current, obtained) = try await targetedRefresh(of: current, plan: plan)
                case .exchange:
                    // The subject is the account's own token, renewed first when it is about to expire.
                    if !isUsable(current, minimumValidity: nil) {
                        current = try await renewedUnderLock(current, forceRefresh: false, minimumValidity: nil)
                    }
                    obtained = try await exchange(of: current, plan: plan)
                }
                current = try keep(obtained, in: current)
                return TargetedCredentials(credentials: current, token: obtained)
            } catch .tokenRequestRejected(let refusal) where !refusal.rejectsTheGrant {
                lastError = .tokenRequestRejected(withTargetRemedy(refusal, credentials: current, target: target))
            }
        }
        throw lastError ?? .configuration("no way to obtain a token for \(target.summary)")
    }

    /// The token kept for `target` in `credentials`, while it is usable and lasts `minimumValidity`.
    public func usableToken(for target: TokenTarget, in credentials: OAuthCredentials, minimumValidity: TimeInterval?) -> TargetedToken? {
        guard !credentials.needsLogin, let kept = credentials.targetedTokens?.first(where: { $0.target.key == target.key }) else { return nil }
        return options.freshness.isUsable(kept, at: clock.now(), minimumValidity: minimumValidity) ? kept : nil
    }

    // MARK: - Routes

    /// A refresh grant asking for the target. A rotated refresh token is stored first (it is the
    /// account's, whatever the access token is for); a refused refresh token marks the account as
    /// needing a sign-in, as for its own token.
    private func targetedRefresh(of credentials: OAuthCredentials, plan: TargetPlan) async throws(OAuthError) -> (OAuthCredentials, TargetedToken) {
        guard let refreshToken = try store.refreshToken(of: credentials) else {
            throw .loginRequired(Problem("\(credentials.displayLabel) has no refresh token.", remedy: .signIn(credentials)))
        }
        let sent = try await sendRefresh(of: credentials, refreshToken: refreshToken, parameters: plan.parameters(for: .refresh))
        var current = sent.current
        let response: TokenResponse
        do throws(OAuthError) {
            response = try TokenResponse.decode(
                Self.readingEmptyRefusal(sent.response, refreshing: true), endpoint: credentials.server.tokenEndpoint)
        } catch .tokenRequestRejected(let error) where error.rejectsTheGrant {
            throw try signInRejected(error, of: current)
        }
        if sent.clientAuthentication != current.clientAuthentication {
            current.clientAuthentication = sent.clientAuthentication
            current = try store.update(current)
        }
        // The rotated refresh token is the account's: so is the expiry the answer states for it.
        if response.refreshToken != nil, let expiry = OAuthCredentials.refreshTokenExpiry(of: response, now: clock.now()) {
            current.refreshTokenExpiry = expiry
            current = try store.update(current)
        }
        return (current, try accepted(response, plan: plan, route: .refresh))
    }

    /// A token exchange of the account's access token for the target (RFC 8693).
    private func exchange(of credentials: OAuthCredentials, plan: TargetPlan) async throws(OAuthError) -> TargetedToken {
        var client = ClientConfiguration(clientId: credentials.clientId, clientSecret: try renewalSecret(of: credentials))
        client.authentication = credentials.clientAuthentication ?? .post
        let sent = try await httpClient.sendAuthenticating(client) { client in
            TokenExchange.request(
                subjectToken: credentials.accessToken, parameters: plan.parameters(for: .exchange),
                tokenEndpoint: credentials.server.tokenEndpoint, client: client)
        }
        try TokenExchange.requireAccessToken(in: sent.response, endpoint: credentials.server.tokenEndpoint)
        let response = try TokenResponse.decode(sent.response, endpoint: credentials.server.tokenEndpoint)
        return try accepted(response, plan: plan, route: .exchange)
    }

    /// The answer as a kept token, once it is checked to be for the target and no wider.
    private func accepted(_ response: TokenResponse, plan: TargetPlan, route: TargetRoute) throws(OAuthError) -> TargetedToken {
        if let problem = TargetCheck.problem(with: response, for: plan) {
            throw .tokenRequestRejected(OAuthServerError(code: "invalid_target", description: problem))
        }
        let now = clock.now()
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(FloatingPointRoundingRule.down))
        return TargetedToken(
            target: plan.target, accessToken: response.accessToken, tokenType: response.tokenType, issuedAt: issuedAt,
            expiresAt: response.expiresIn.map { issuedAt.addingTimeInterval($0.rounded(.down)) }, scopes: response.scopes, obtainedBy: route)
    }

    /// Keeps `token` in the account's record: in place of an earlier one for the same target, and
    /// without the tokens that have expired.
    private func keep(_ token: TargetedToken, in credentials: OAuthCredentials) throws(OAuthError) -> OAuthCredentials {
        var updated = try load(credentials.identifier)
        let now = clock.now()
        var kept = (updated.targetedTokens ?? []).filter {
            $0.target.key != token.target.key && $0.expiry(assumedLifetime: options.assumedLifetime) > now
        }
        kept.append(token)
        updated.targetedTokens = kept
        return try store.update(updated)
    }

    /// A refusal of the target, with the sign-in that would grant it as its next step.
    private func withTargetRemedy(_ refusal: OAuthServerError, credentials: OAuthCredentials, target: TokenTarget) -> OAuthServerError {
        var refusal = refusal
        guard refusal.knownRemedy == nil else { return refusal }
        var scopes = credentials.recipe?.scopes ?? credentials.scopes
        for scope in target.scopes ?? [] where !scopes.contains(scope) { scopes.append(scope) }
        refusal.nextStep = .signInForTarget(
            account: credentials.selectableName, grant: credentials.obtainedBy, target: target,
            scopes: target.scopes == nil ? nil : scopes)
        return refusal
    }
}
