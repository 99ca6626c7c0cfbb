import FoundationEssentials
import SFAuth

/// The token endpoint's answer (`TokenResponse.decode`) with fuzzed status, content type and body,
/// and everything sfauth does with a token response it accepted: credentials for a Salesforce and
/// an OpenID Connect server, a refresh on top of them, expiry arithmetic, the checks of a per-call
/// token (its `aud` read from a JWT, its scopes against those asked), and the stored record's JSON
/// round trip with that token kept in it.
///
/// Input: an HTTP response (`FuzzInput.response`), e.g. `200\ncontent-type: application/json\n\n{…}`.
@Sendable func fuzzTokenResponse(_ data: UnsafeRawBufferPointer) {
    let response = FuzzInput.response(data)
    _ = TokenResponse.rotatedRefreshToken(in: response)
    let token: TokenResponse
    do {
        token = try TokenResponse.decode(response, endpoint: "https://login.salesforce.com/services/oauth2/token")
    } catch {
        consume(error)
        return
    }
    for server in FuzzServers.all {
        let client = ClientConfiguration(clientId: "PlatformCLI", scopes: ["refresh_token", "api", "web"])
        let credentials = OAuthCredentials(
            response: token, server: server, client: client,
            redirectURI: "http://localhost:1717/OauthRedirect", obtainedBy: .browser, now: fuzzNow)
        exerciseExpiry(credentials)
        // A refresh an hour later with the same answer, and a stored account refreshed by it.
        var refreshed = credentials.refreshed(with: token, now: fuzzNow.addingTimeInterval(3600))
        exerciseExpiry(refreshed)
        refreshed.targetedTokens = perCallTokens(from: token, server: server)
        roundTrip(refreshed)
        _ = refreshed.displayLabel
    }
}

/// The answer checked as a per-call token for each kind of target, and kept as one where it passed.
private func perCallTokens(from token: TokenResponse, server: AuthorizationServer) -> [TargetedToken] {
    _ = TargetCheck.audiences(of: token.accessToken)
    let targets = [
        TokenTarget(scopes: ["read"]), TokenTarget(audience: "api"), TokenTarget(resource: "https://api.example/"),
        TokenTarget(scopes: token.scopes, resource: "api://orders"),
    ]
    var kept: [TargetedToken] = []
    for target in targets {
        guard let plan = try? TargetPlan.make(target: target, server: server, offersExchange: true, forceExchange: false),
            TargetCheck.problem(with: token, for: plan) == nil
        else { continue }
        kept.append(
            TargetedToken(
                target: target, accessToken: token.accessToken, tokenType: token.tokenType, issuedAt: fuzzNow,
                expiresAt: token.expiresIn.map { fuzzNow.addingTimeInterval($0) }, scopes: token.scopes, obtainedBy: .refresh))
    }
    return kept
}

private func exerciseExpiry(_ credentials: OAuthCredentials) {
    for lifetime: TimeInterval in [7200, .infinity] {
        _ = credentials.expiry(assumedLifetime: lifetime)
        for leeway: TimeInterval in [0, 60] {
            _ = credentials.isExpired(at: fuzzNow, leeway: leeway, assumedLifetime: lifetime)
            _ = credentials.isExpired(at: fuzzNow.addingTimeInterval(86_400 * 365), leeway: leeway, assumedLifetime: lifetime)
        }
    }
}

/// The credential file's encoding and decoding (`CredentialFile`, shared by the store and the front
/// end): what is stored must read back.
private func roundTrip(_ credentials: OAuthCredentials) {
    let bytes = CredentialFile.encode(credentials)
    do {
        let again = try FileCredentialStore.decode(bytes, path: "fuzz.json", identifier: credentials.identifier)
        _ = again.identifier
    } catch {
        consume(error)
    }
}

/// The servers credentials are made for: Salesforce (no issuer) and an OpenID Connect server.
enum FuzzServers {
    static let salesforce = AuthorizationServer(
        authorizationEndpoint: "https://login.salesforce.com/services/oauth2/authorize",
        tokenEndpoint: "https://login.salesforce.com/services/oauth2/token",
        revocationEndpoint: "https://login.salesforce.com/services/oauth2/revoke",
        userinfoEndpoint: "https://login.salesforce.com/services/oauth2/userinfo",
        flavor: .salesforce)
    static let oidc = AuthorizationServer(
        authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
        revocationEndpoint: "https://idp.example/revoke", userinfoEndpoint: "https://idp.example/userinfo",
        issuer: "https://idp.example", jwksURI: "https://idp.example/jwks")
    static let all = [salesforce, oidc]
}
