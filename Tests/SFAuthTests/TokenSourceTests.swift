import Foundation
import SFAuth
import Testing

@testable import SFAuthCore

/// The token lifecycle with the real file store and lock, and a scripted token endpoint (`FakeHTTPClient`).
@Suite struct TokenSourceTests {
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-ts-" + UUID().uuidString)
    let start = Date(timeIntervalSince1970: 1_700_000_000)

    func stored(expiresIn: TimeInterval?, refreshToken: String? = "rt-0") throws -> OAuthCredentials {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/token")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli", scopes: ["api"]),
            redirectURI: "http://127.0.0.1:1/cb", state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        let credentials = OAuthCredentials(
            response: TokenResponse(accessToken: "at-0", expiresIn: expiresIn, refreshToken: refreshToken, scopes: ["api"], instanceURL: "https://i"),
            request: request, now: start)
        return try store.save(credentials)
    }

    func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(body.utf8))
    }

    @Test func expiredTokenIsRefreshedAndTheRotatedRefreshTokenStored() async throws {
        _ = try stored(expiresIn: 3600)
        let endpoint = FakeHTTPClient { _ in self.json(200, #"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1"}"#) }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(3590)))
        let fresh = try await source.credentials()
        #expect(fresh.accessToken == "at-1")
        #expect(fresh.refreshToken == "rt-1")
        #expect(fresh.instanceURL == "https://i")  // kept from before
        #expect(try store.loadDefault() == fresh)
        #expect(endpoint.bodies == ["grant_type=refresh_token&refresh_token=rt-0&client_id=cli"])
    }

    /// A client-credentials account renews with the client secret it signed in with, and only that
    /// one: a secret meant for another client is never sent to this account's server (issue 17 §2).
    @Test func aClientSecretGoesOnlyWithTheAccountItSignedIn() async throws {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/token")
        var credentials = OAuthCredentials(
            response: TokenResponse(accessToken: "at-0", expiresIn: 60), server: server,
            client: ClientConfiguration(clientId: "svc", clientSecret: "right-secret"), obtainedBy: .clientCredentials, now: start)
        credentials.identifier = "idp.example/client-svc"
        #expect(credentials.clientSecretBinding != nil && credentials.clientSecretBinding?.digest.contains("right") == false)
        try store.save(credentials)
        let endpoint = FakeHTTPClient { _ in self.json(200, #"{"access_token":"at-1","expires_in":60}"#) }
        let later = TestClock(now: start.addingTimeInterval(3600))

        let wrong = TokenSource(store: store, httpClient: endpoint, options: .init(clientSecret: "another-clients-secret"), clock: later)
        let refused = await #expect(throws: OAuthError.self) { try await wrong.credentials() }
        #expect(refused?.description.contains("not the one it signed in with") == true)
        #expect(endpoint.bodies.isEmpty)

        let right = TokenSource(store: store, httpClient: endpoint, options: .init(clientSecret: "right-secret"), clock: later)
        #expect(try await right.credentials().accessToken == "at-1")
        #expect(endpoint.bodies == ["grant_type=client_credentials&client_id=svc&client_secret=right-secret"])
    }

    @Test func aBindingKnowsItsSecretAndNoOther() {
        let one = ClientSecretBinding(secret: "s3cret")
        let two = ClientSecretBinding(secret: "s3cret")
        #expect(one.matches("s3cret") && two.matches("s3cret"))
        #expect(!one.matches("s3cret ") && !one.matches(""))
        #expect(one.salt != two.salt && one.digest != two.digest)  // salted: equal secrets are not recognisable
    }

    @Test func responseWithoutRefreshTokenKeepsTheOldOne() async throws {
        _ = try stored(expiresIn: 10)
        let endpoint = FakeHTTPClient { _ in self.json(200, #"{"access_token":"at-1","expires_in":"3600"}"#) }
        let fresh = try await TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100))).credentials()
        #expect(fresh.refreshToken == "rt-0")
        #expect(try store.loadDefault()?.refreshToken == "rt-0")
    }

    @Test func tokenWithoutStatedExpiryUsesTheAssumedLifetime() async throws {
        _ = try stored(expiresIn: nil)  // Salesforce: no expires_in
        let endpoint = FakeHTTPClient { _ in self.json(200, #"{"access_token":"at-1"}"#) }
        let options = TokenSource.Options(leeway: 60, assumedLifetime: 7200)
        let early = TokenSource(store: store, httpClient: endpoint, options: options, clock: TestClock(now: self.start.addingTimeInterval(7000)))
        #expect(try await early.credentials().accessToken == "at-0")
        #expect(endpoint.count == 0)
        let late = TokenSource(store: store, httpClient: endpoint, options: options, clock: TestClock(now: self.start.addingTimeInterval(7150)))
        #expect(try await late.credentials().accessToken == "at-1")
        #expect(endpoint.count == 1)
    }

    @Test func rejectedRefreshTokenMarksTheAccountAndKeepsIt() async throws {
        _ = try stored(expiresIn: 10)
        let endpoint = FakeHTTPClient { _ in self.json(400, #"{"error":"invalid_grant","error_description":"expired access/refresh token"}"#) }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(error?.recovery == .logInAgain)
        #expect(error?.description.contains("expired access/refresh token") == true)
        let kept = try #require(try store.loadDefault())
        #expect(kept.needsLogin)
        #expect(kept.refreshToken == "rt-0")
        // Later calls do not ask the server again.
        await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(endpoint.count == 1)
    }

    @Test func aBare400ToARefreshIsARejectedRefreshToken() async throws {
        // Glewlwyd answers a retired or revoked refresh token with 400 and no body at all.
        _ = try stored(expiresIn: 10)
        let endpoint = FakeHTTPClient { _ in HTTPResponse(status: 400, body: []) }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(error?.recovery == .logInAgain)
        #expect(try store.loadDefault()?.needsLogin == true)
        // A 400 with a body that is not an OAuth error is the server's trouble, not the token's.
        _ = try stored(expiresIn: 10)
        let html = FakeHTTPClient { _ in HTTPResponse(status: 400, body: Array("<html>proxy error</html>".utf8)) }
        let again = await #expect(throws: OAuthError.self) {
            try await TokenSource(store: self.store, httpClient: html, clock: TestClock(now: self.start.addingTimeInterval(100))).credentials()
        }
        #expect(again?.recovery == .retryLater)
        #expect(try store.loadDefault()?.needsLogin == false)
    }

    @Test func networkFailureChangesNothing() async throws {
        let before = try stored(expiresIn: 10)
        let endpoint = FakeHTTPClient { _ in throw HTTPTransportError(kind: .connect, message: "could not connect to idp.example:443") }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(error?.recovery == .retryLater)
        #expect(try store.loadDefault() == before)
    }

    @Test func noRefreshTokenMeansLoginRequired() async throws {
        _ = try stored(expiresIn: 10, refreshToken: nil)
        let source = TokenSource(
            store: store, httpClient: FakeHTTPClient { _ in self.json(500, "") },
            clock: TestClock(now: self.start.addingTimeInterval(100)))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(error?.recovery == .logInAgain)
    }

    @Test func theRotatedRefreshTokenIsKeptWhenTheRestOfTheAnswerIsUnusable() async throws {
        _ = try stored(expiresIn: 10)
        // The server rotated (rt-0 is dead now) but the answer cannot be used: no access token.
        let endpoint = FakeHTTPClient { _ in self.json(200, #"{"refresh_token":"rt-1","token_type":"mac"}"#) }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials() }
        #expect(error?.recovery == .retryLater)
        let kept = try #require(try store.loadDefault())
        #expect(kept.refreshToken == "rt-1")
        #expect(kept.accessToken == "at-0")
    }

    @Test func aRefreshFinishingAfterLogoutDoesNotBringTheAccountBack() async throws {
        let before = try stored(expiresIn: 10)
        let entered = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let endpoint = FakeHTTPClient { _ in
            entered.continuation.yield()
            for await _ in release.stream { break }
            return self.json(200, #"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1"}"#)
        }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let refresh = Task { try await source.credentials() }
        for await _ in entered.stream { break }
        // A logout that ignored the account's lock would delete now; one that takes it waits, on its
        // store's clock, which here says when it started waiting and holds it until the refresh is done.
        let clock = TestClock()
        let waiting = AsyncStream<Void>.makeStream()
        let refreshDone = AsyncStream<Void>.makeStream()
        clock.onSleep { _ in
            waiting.continuation.yield()
            for await _ in refreshDone.stream {}
        }
        let logoutStore = FileCredentialStore(directory: store.directory, clock: clock)
        let logout = Task {
            let lock = try await logoutStore.lock(account: before.identifier)
            defer { withExtendedLifetime(lock) {} }
            try logoutStore.delete(identifier: before.identifier)
        }
        for await _ in waiting.stream { break }
        #expect(try store.load(identifier: before.identifier) != nil, "the logout must wait for the refresh")
        release.continuation.yield()
        _ = try await refresh.value
        refreshDone.continuation.finish()
        try await logout.value
        #expect(try store.identifiers().isEmpty)
        // And a refresh that finds its account gone stores nothing.
        _ = try stored(expiresIn: 10)
        try store.delete(identifier: before.identifier)
        #expect(throws: OAuthError.self) { try store.update(before) }
        #expect(try store.identifiers().isEmpty)
    }

    @Test func aWaiterAdoptsTheTokenJustStoredInsteadOfRefreshingAgain() async throws {
        // Five-second tokens: within the default 60 s leeway the moment they arrive, yet good to use.
        _ = try stored(expiresIn: 5)
        let clock = TestClock(now: start.addingTimeInterval(10))
        let endpoint = FakeHTTPClient { _ in
            try await Task.sleep(for: .milliseconds(50))
            return self.json(200, #"{"access_token":"at-\#(UUID().uuidString)","expires_in":5,"refresh_token":"rt-\#(UUID().uuidString)"}"#)
        }
        let source = TokenSource(store: store, httpClient: endpoint, clock: clock)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await source.credentials().accessToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(endpoint.count == 1)
        // Two seconds later the token (5 s, leeway at most 2.5 s) is still handed out as it is.
        clock.advance(by: .seconds(2))
        #expect(try await source.credentials().accessToken == tokens.first)
        #expect(endpoint.count == 1)
    }

    @Test func concurrentCallersShareOneRefresh() async throws {
        _ = try stored(expiresIn: 10)
        let endpoint = FakeHTTPClient { _ in
            try await Task.sleep(for: .milliseconds(50))
            return self.json(200, #"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1"}"#)
        }
        let source = TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: self.start.addingTimeInterval(100)))
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await source.credentials().accessToken } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(tokens == Array(repeating: "at-1", count: 20))
        #expect(endpoint.count == 1)
    }
}
