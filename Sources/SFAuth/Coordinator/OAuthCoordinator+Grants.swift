import FoundationEssentials
import SFAuthCore

extension OAuthCoordinator {
    /// Signs in with a grant that needs no browser redirect, and stores the credentials like the
    /// browser sign-in does. The delegate hears `willBeginAuthentication`, for the device grant
    /// `didReceiveDeviceAuthorization`, then `didAuthenticate` or `didFail`, with the grant's own
    /// auth type.
    ///
    /// Ends with `OAuthError.cancelled` on task cancellation or `cancel()` (the device grant's
    /// polling stops at once: its wait between requests is a cancellable sleep). On failure nothing stored is changed.
    public func authenticate(using grant: Grant) async throws(OAuthError) -> OAuthCredentials {
        try await runFlow(info: AuthInfo(authType: grant.authType)) { coordinator, info throws(OAuthError) in
            try await coordinator.runGrant(grant, info: info)
        }
    }

    private func runGrant(_ grant: Grant, info: AuthInfo) async throws(OAuthError) -> OAuthCredentials {
        let server = configuration.server
        let client = configuration.client
        try server.validate()
        let tokens: TokenResponse
        var renewal: JWTBearerRenewal?
        switch grant.kind {
        case .deviceCode:
            tokens = try await pollDeviceAuthorization(info: info)
        case .clientCredentials:
            guard client.clientSecret != nil else {
                throw .configuration(
                    Problem(
                        "the client credentials grant needs the client's secret; client '\(client.clientId)' has none",
                        remedy: .provideClientSecret(account: nil)))
            }
            tokens = try await requestTokens(TokenRequest.clientCredentials(tokenEndpoint: server.tokenEndpoint, client: client))
        case .password(let username, let password):
            tokens = try await requestTokens(
                TokenRequest.password(
                    username: username, password: password,
                    tokenEndpoint: server.tokenEndpoint, client: client))
        case .jwtBearer(let username, let signer, let audience):
            let audience = audience ?? JWTBearerAssertion.defaultAudience(for: server)
            renewal = signer.keyFile.map { JWTBearerRenewal(keyFile: $0, keyID: signer.keyID, subject: username, audience: audience) }
            tokens = try await requestTokens(
                try await signer.tokenRequest(
                    username: username, audience: audience,
                    tokenEndpoint: server.tokenEndpoint, client: client, now: clock.now()))
        case .refreshToken(let refreshToken):
            var response = try await requestTokens(
                TokenRequest.refresh(
                    refreshToken: refreshToken, tokenEndpoint: server.tokenEndpoint,
                    client: client))
            // §6: the server may keep the refresh token as it is; then the imported one is the account's.
            if response.refreshToken == nil { response.refreshToken = refreshToken }
            tokens = response
        }
        if Task.isCancelled { throw .cancelled }

        var credentials = OAuthCredentials(
            response: tokens, server: server, client: client, obtainedBy: grant.authType,
            username: grant.username, now: clock.now())
        credentials.jwtBearerRenewal = renewal
        credentials.recipe = SignInRecipe(client: client, grant: grant.authType, username: grant.username)
        // No nonce: none of these grants sends one (OIDC Core §3.1.3.7 asks for it only when one was
        // sent); and an ID token is checked when one comes, not required (§3.1.3.3 is the code flow's).
        try await idTokenValidator.accept(tokens, into: &credentials, nonce: nil, codeFlowAskedForOpenID: false, now: clock.now())
        let kept = try await identifyAndKeep(&credentials)
        await revokeReplaced(kept)
        return credentials
    }

    /// One token request and its response.
    private func requestTokens(_ request: HTTPRequest) async throws(OAuthError) -> TokenResponse {
        if Task.isCancelled { throw .cancelled }
        return try TokenResponse.decode(try await httpClient.sendForOAuth(request), endpoint: request.url)
    }

    /// RFC 8628: asks for the codes, tells the delegate, then polls the token endpoint at the
    /// server's interval (slower after `slow_down`) until the person approves, declines, the code
    /// expires, the configured timeout passes, or the flow is cancelled.
    private func pollDeviceAuthorization(info: AuthInfo) async throws(OAuthError) -> TokenResponse {
        let server = configuration.server
        guard let endpoint = server.deviceAuthorizationEndpoint else {
            throw .configuration(
                Problem("the server publishes no device authorization endpoint (RFC 8628)", remedy: .giveDeviceAuthorizationEndpoint))
        }
        let authorization = try DeviceAuthorization.decode(
            try await httpClient.sendForOAuth(DeviceAuthorization.request(endpoint: endpoint, client: configuration.client)),
            endpoint: endpoint)
        delegate?.oauthCoordinator(self, didReceiveDeviceAuthorization: authorization, info: info)

        let limitSeconds = min(authorization.expiresIn, Int(configuration.timeout.components.seconds))
        let deadline = clock.monotonicNow() + .seconds(limitSeconds)
        var polling = DevicePolling(authorization)
        var wait = authorization.interval
        while true {
            // §3.5: wait the interval before each request, the first one included.
            try await sleep(seconds: wait, until: deadline)
            if clock.monotonicNow() >= deadline {
                throw .timedOut(
                    seconds: limitSeconds,
                    hint: "Nobody approved the code \(authorization.displayUserCode) in time; run the sign-in again.")
            }
            let request = polling.tokenRequest(tokenEndpoint: server.tokenEndpoint, client: configuration.client)
            switch try polling.next(after: try await httpClient.sendForOAuth(request), endpoint: server.tokenEndpoint) {
            case .granted(let tokens): return tokens
            case .wait(let seconds): wait = seconds
            }
        }
    }

    /// Sleeps `seconds` (or until `deadline`) on the coordinator's clock; task cancellation (which
    /// `cancel()` is) ends the sleep at once and throws `cancelled`.
    private func sleep(seconds: Int, until deadline: Duration) async throws(OAuthError) {
        let remaining = min(clock.monotonicNow() + .seconds(seconds), deadline) - clock.monotonicNow()
        guard remaining > .zero else { return }
        do {
            try await clock.sleep(for: remaining)
        } catch {
            throw .cancelled
        }
    }
}
