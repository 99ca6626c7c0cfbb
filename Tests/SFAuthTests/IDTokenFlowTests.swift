import Foundation
import JWTKit
import SFAuth
import Testing

/// Where the library applies ID token validation: after the browser sign-in's code exchange (a
/// rejected token stores nothing and the browser's page says the sign-in failed) and after a
/// refresh (the rotated tokens are kept, the rejected ID token is not). Real listener and file
/// store; scripted token endpoint and key set.
@Suite struct IDTokenFlowTests {
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-idt-" + UUID().uuidString)
    let server = AuthorizationServer(
        authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
        issuer: "https://idp.example")

    func tokenResponse(_ fields: String) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: ["content-type": "application/json"],
            body: Array(#"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1","scope":"openid"\#(fields)}"#.utf8))
    }

    func signIn(server: AuthorizationServer, endpoint: any HTTPClient, browser: RedirectingBrowser) async -> (OAuthError?, Recorder) {
        let delegate = Recorder(store: store)
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: "cli", scopes: ["openid"]), timeout: .seconds(20),
                browserLauncher: browser, fetchIdentity: false),
            delegate: delegate, httpClient: endpoint, store: store, clock: TestClock(now: IDTokenValidatorTests.now))
        do {
            _ = try await coordinator.authenticate()
            return (nil, delegate)
        } catch {
            return (error, delegate)
        }
    }

    @Test func aSignInWhoseIDTokenIsRejectedStoresNothingAndSaysSoInTheBrowser() async throws {
        // The token is well signed and addressed, but it cannot carry this login's (random) nonce.
        let key = try TestKey.rsa(kid: "rsa-1")
        let token = try await key.sign(TestClaims())
        let browser = RedirectingBrowser()
        let (error, delegate) = await signIn(
            server: server, endpoint: FakeHTTPClient(always: .response(tokenResponse(#","id_token":"\#(token)""#))),
            browser: browser)

        #expect(error == .idTokenRejected("the ID token's nonce does not match this login's"))
        #expect(delegate.events.last == "didFail(\(error.map(String.init(describing:)) ?? ""))")
        #expect(try store.identifiers().isEmpty)
        let page = try #require(await browser.finalPage())
        #expect(page.contains("nonce does not match"))
    }

    @Test func anOpenIDServerWithKeysMustSendAnIDToken() async throws {
        var server = server
        server.jwksURI = "https://idp.example/jwks"
        let endpoint = FakeHTTPClient(always: .response(tokenResponse("")))
        let (error, _) = await signIn(server: server, endpoint: endpoint, browser: RedirectingBrowser())
        #expect(error == .idTokenRejected("the server granted the 'openid' scope but sent no ID token (OIDC Core §3.1.3.3 requires one)"))
        #expect(endpoint.requests.count == 1)  // the exchange; no key set was needed to say so
        #expect(try store.identifiers().isEmpty)
    }

    @Test func aRefreshWithAnIDTokenForSomeoneElseKeepsTheRotatedTokensButNotThatIDToken() async throws {
        let key = try TestKey.rsa(kid: "rsa-1")
        var original = TestClaims()
        original.nonce = nil
        let originalToken = try await key.sign(original)
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli", scopes: ["openid"]),
            redirectURI: "http://127.0.0.1:1/cb", state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        try store.save(
            OAuthCredentials(
                response: TokenResponse(accessToken: "at-0", expiresIn: 10, refreshToken: "rt-0", idToken: originalToken),
                request: request, now: IDTokenValidatorTests.now.addingTimeInterval(-3600)))
        var someoneElse = original
        someoneElse.sub = "user-2"
        let refreshed = tokenResponse(#","id_token":"\#(try await key.sign(someoneElse))""#)
        let source = TokenSource(store: store, httpClient: FakeHTTPClient { _ in refreshed }, clock: TestClock(now: IDTokenValidatorTests.now))

        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(
            error
                == .idTokenRejected(
                    "in the refresh response, the refreshed ID token is for the subject 'user-2', not 'user-1' who signed in (the rotated refresh token was stored; the new access token was not)"
                ))
        let stored = try #require(try store.loadDefault())
        #expect(stored.refreshToken == "rt-1")  // the rotated refresh token survived
        #expect(stored.accessToken == "at-0")  // the refused response's access token is not handed out
        #expect(stored.idToken == originalToken)
    }

    @Test func aRefreshWithAValidIDTokenStoresIt() async throws {
        let key = try TestKey.rsa(kid: "rsa-1")
        var claims = TestClaims()
        claims.nonce = nil
        let originalToken = try await key.sign(claims)
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli", scopes: ["openid"]),
            redirectURI: "http://127.0.0.1:1/cb", state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        try store.save(
            OAuthCredentials(
                response: TokenResponse(accessToken: "at-0", expiresIn: 10, refreshToken: "rt-0", idToken: originalToken),
                request: request, now: IDTokenValidatorTests.now.addingTimeInterval(-3600)))
        claims.iat += 1
        let newToken = try await key.sign(claims)
        let refreshed = tokenResponse(#","id_token":"\#(newToken)""#)
        let fresh = try await TokenSource(
            store: store, httpClient: FakeHTTPClient { _ in refreshed }, clock: TestClock(now: IDTokenValidatorTests.now)
        )
        .credentials()
        #expect(fresh.idToken == newToken)
        #expect(try store.loadDefault()?.idToken == newToken)
    }
}
