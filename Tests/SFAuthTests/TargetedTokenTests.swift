import Foundation
import SFAuth
import Testing

@testable import SFAuthCore

/// Per-call tokens from an account's sign-in, with the real file store and lock and a scripted
/// token endpoint: obtained once and kept, the rotated refresh token stored first, the account's
/// own token untouched, refusals said with the sign-in that would grant the target.
@Suite struct TargetedTokenTests {
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-tt-" + UUID().uuidString)
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    @discardableResult
    func stored() throws -> OAuthCredentials {
        let server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/token", issuer: "https://idp.example")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli", scopes: ["read", "write"]),
            redirectURI: "http://127.0.0.1:1/cb", state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        let credentials = OAuthCredentials(
            response: TokenResponse(accessToken: "at-0", expiresIn: 3600, refreshToken: "rt-0", scopes: ["read", "write"]), request: request,
            now: start)
        return try store.save(credentials)
    }

    static func jwt(_ claims: String) -> String {
        Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
    }

    func source(_ endpoint: FakeHTTPClient, after seconds: TimeInterval = 10) -> TokenSource {
        TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: start.addingTimeInterval(seconds)))
    }

    @Test func aNarrowerScopeComesFromARefreshAndIsKept() async throws {
        try stored()
        let endpoint = FakeHTTPClient(replies: [.json(200, #"{"access_token":"at-read","expires_in":600,"scope":"read","refresh_token":"rt-1"}"#)])
        let source = source(endpoint)
        let first = try await source.token(for: TokenTarget(scopes: ["read"]))
        #expect(first.token.accessToken == "at-read" && first.token.obtainedBy == .refresh)
        #expect(endpoint.bodies == ["grant_type=refresh_token&refresh_token=rt-0&scope=read&client_id=cli"])
        // The rotated refresh token is the account's; its own access token is untouched.
        let account = try #require(try store.loadDefault())
        #expect(account.refreshToken == "rt-1" && account.accessToken == "at-0")
        #expect(account.targetedTokens?.map(\.accessToken) == ["at-read"])
        // Asked again (in another process: a new source), it is the kept one: no request.
        let again = try await self.source(endpoint, after: 20).token(for: TokenTarget(scopes: ["read"]))
        #expect(again.token.accessToken == "at-read" && endpoint.requests.count == 1)
        // The file reader of the front end reads what the store wrote.
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: store.path(for: account.identifier))))
        #expect(try CredentialFile.decode(bytes) == account)
    }

    @Test func aWiderGrantIsNeverHandedOut() async throws {
        try stored()
        let endpoint = FakeHTTPClient(replies: [.json(200, #"{"access_token":"at-x","expires_in":600,"scope":"read write admin"}"#)])
        let refused = await #expect(throws: OAuthError.self) { try await source(endpoint).token(for: TokenTarget(scopes: ["read"])) }
        #expect(refused?.description.contains("wider than the 'read' asked for") == true)
        #expect(try store.loadDefault()?.targetedTokens == nil)
    }

    @Test func aRefusedTargetSaysTheSignInThatGrantsIt() async throws {
        try stored()
        let endpoint = FakeHTTPClient(replies: [.json(400, #"{"error":"invalid_scope","error_description":"exceeds the grant"}"#)])
        let error = await #expect(throws: OAuthError.self) { try await source(endpoint).token(for: TokenTarget(scopes: ["admin"])) }
        guard case .tokenRequestRejected(let refusal)? = error, case .signInForTarget(_, _, let target, let scopes)? = refusal.nextStep else {
            Issue.record("not a refusal with the sign-in for the target: \(String(describing: error))")
            return
        }
        #expect(target == TokenTarget(scopes: ["admin"]) && scopes == ["read", "write", "admin"])
        // Not the refresh token's fault: the account stays signed in.
        #expect(try store.loadDefault()?.needsLogin == false)
    }

    @Test func anIgnoredResourceFallsBackToAnExchangeWhereOffered() async throws {
        try stored()
        let ignored = Self.jwt(#"{"aud":"cli"}"#)
        let forIt = Self.jwt(#"{"aud":"https://api.example/"}"#)
        let endpoint = FakeHTTPClient(replies: [
            .json(200, #"{"access_token":"\#(ignored)","expires_in":600}"#),
            .json(200, #"{"access_token":"\#(forIt)","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","expires_in":600}"#),
        ])
        let got = try await source(endpoint).token(for: TokenTarget(resource: "https://api.example/")) { _ in true }
        #expect(got.token.accessToken == forIt && got.token.obtainedBy == .exchange)
        #expect(endpoint.bodies.count == 2)
        #expect(endpoint.bodies[1].contains("subject_token=at-0") && endpoint.bodies[1].contains("resource=https%3A%2F%2Fapi.example%2F"))
    }

    @Test func aRejectedRefreshTokenNeedsASignIn() async throws {
        try stored()
        let endpoint = FakeHTTPClient(replies: [.json(400, #"{"error":"invalid_grant"}"#)])
        let error = await #expect(throws: OAuthError.self) { try await source(endpoint).token(for: TokenTarget(scopes: ["read"])) }
        #expect(error?.recovery == .logInAgain)
        #expect(try store.loadDefault()?.needsLogin == true)
    }

    @Test func minimumValidityRenewsTheAccountsOwnToken() async throws {
        try stored()
        let endpoint = FakeHTTPClient(replies: [.json(200, #"{"access_token":"at-1","expires_in":3600}"#)])
        // 50 minutes in: 10 left, enough for the leeway, not for --min-valid 15m.
        let source = source(endpoint, after: 3000)
        #expect(try await source.credentials().accessToken == "at-0")
        #expect(try await source.credentials(minimumValidity: 900).accessToken == "at-1")
        #expect(endpoint.requests.count == 1)
    }
}
