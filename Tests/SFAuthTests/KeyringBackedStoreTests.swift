import Foundation
import SFAuth
import Synchronization
import Testing

/// The file store with its refresh tokens in a secret store (an in-memory one here; the real
/// keyring is tested in SecretServiceStoreTests and end to end).
@Suite struct KeyringBackedStoreTests {
    let directory = FileManager.default.temporaryDirectory.path + "/sfauth-kb-" + UUID().uuidString
    let secrets = MemorySecretStore()

    func credentials(refreshToken: String?, expiresIn: TimeInterval = 1) -> OAuthCredentials {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/token")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli"), redirectURI: "http://127.0.0.1:1/cb",
            state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        let payload = Base64URL.encode(Array(#"{"sub":"u1"}"#.utf8))
        return OAuthCredentials(
            response: TokenResponse(
                accessToken: "at-0", expiresIn: expiresIn, refreshToken: refreshToken,
                idToken: "h.\(payload).s"),
            request: request, now: Date(timeIntervalSince1970: 0))
    }

    @Test func refreshTokenGoesToTheSecretStoreNotTheFile() throws {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        try store.save(credentials(refreshToken: "rt-secret"))
        let file = try String(contentsOfFile: store.path(for: "idp.example/u1"), encoding: .utf8)
        #expect(!file.contains("rt-secret"))
        let loaded = try #require(try store.loadDefault())
        #expect(loaded.refreshToken == nil)
        #expect(loaded.refreshTokenInSecretStore == true)
        #expect(try store.refreshToken(of: loaded) == "rt-secret")
        #expect(secrets.lookups == 1)
    }

    @Test func readingAValidTokenNeverAsksTheSecretStore() async throws {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        try store.save(credentials(refreshToken: "rt", expiresIn: 3600))
        let source = TokenSource(
            store: store, httpClient: FakeHTTPClient.refusingEveryRequest(),
            clock: TestClock(now: Date(timeIntervalSince1970: 10)))
        #expect(try await source.credentials().accessToken == "at-0")
        #expect(secrets.lookups == 0)
    }

    @Test func refreshRotatesTheTokenInTheSecretStore() async throws {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        try store.save(credentials(refreshToken: "rt-0"))
        let endpoint = FakeHTTPClient { _ in
            HTTPResponse(status: 200, body: Array(#"{"access_token":"at-1","expires_in":3600,"refresh_token":"rt-1"}"#.utf8))
        }
        _ = try await TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: Date(timeIntervalSince1970: 100))).credentials()
        #expect(endpoint.bodies == ["grant_type=refresh_token&refresh_token=rt-0&client_id=cli"])
        #expect(secrets.value(account: "idp.example/u1") == "rt-1")
        // A refresh response without a refresh token keeps the one in the secret store.
        let keep = FakeHTTPClient { _ in HTTPResponse(status: 200, body: Array(#"{"access_token":"at-2","expires_in":1}"#.utf8)) }
        _ = try await TokenSource(store: store, httpClient: keep, clock: TestClock(now: Date(timeIntervalSince1970: 100_000))).credentials()
        #expect(secrets.value(account: "idp.example/u1") == "rt-1")
        #expect(try store.loadDefault()?.accessToken == "at-2")
    }

    @Test func deleteRemovesTheSecret() throws {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        try store.save(credentials(refreshToken: "rt"))
        try store.delete(identifier: "idp.example/u1")
        #expect(secrets.value(account: "idp.example/u1") == nil)
        #expect(try store.identifiers().isEmpty)
    }

    @Test func fileOnlyStoreCannotReadAKeyringAccountAndSaysWhy() throws {
        try FileCredentialStore(directory: directory, secretStore: secrets).save(credentials(refreshToken: "rt"))
        let fileOnly = FileCredentialStore(directory: directory)
        let loaded = try #require(try fileOnly.loadDefault())
        let error = #expect(throws: OAuthError.self) { try fileOnly.refreshToken(of: loaded) }
        #expect(error?.description.contains("keyring") == true)
    }

    @Test func unavailableSecretStoreFailsTheSaveAndLosesNothing() throws {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        try store.save(credentials(refreshToken: "rt-0"))
        secrets.fail = true
        var updated = credentials(refreshToken: "rt-1")
        updated.accessToken = "at-1"
        #expect(throws: OAuthError.self) { try store.save(updated) }
        secrets.fail = false
        #expect(try store.loadDefault()?.accessToken == "at-0")
        #expect(secrets.value(account: "idp.example/u1") == "rt-0")
    }
}

/// A secret store in memory that can be told to fail.
final class MemorySecretStore: SecretStore, @unchecked Sendable {
    private let state = Mutex<(values: [String: String], lookups: Int, fail: Bool)>(([:], 0, false))
    var displayName: String { "the test keyring" }
    var lookups: Int { state.withLock { $0.lookups } }
    var fail: Bool {
        get { state.withLock { $0.fail } }
        set { state.withLock { $0.fail = newValue } }
    }

    func value(account: String) -> String? { state.withLock { $0.values[account + "/refresh_token"] } }

    func secret(account: String, kind: String) throws(OAuthError) -> String? {
        try state.withLock { state throws(OAuthError) in
            if state.fail { throw .storage("the test keyring is locked") }
            state.lookups += 1
            return state.values[account + "/" + kind]
        }
    }

    func setSecret(_ value: String, account: String, kind: String) throws(OAuthError) {
        try state.withLock { state throws(OAuthError) in
            if state.fail { throw .storage("the test keyring is locked") }
            state.values[account + "/" + kind] = value
        }
    }

    func deleteSecret(account: String, kind: String) throws(OAuthError) {
        try state.withLock { state throws(OAuthError) in
            if state.fail { throw .storage("the test keyring is locked") }
            state.values[account + "/" + kind] = nil
        }
    }
}

@Suite struct RefreshTokenPlacementTests {
    let directory = FileManager.default.temporaryDirectory.path + "/sfauth-kp-" + UUID().uuidString

    @Test(arguments: [false, true])
    func anAccountKeepsItsPlaceWhateverTheStorePrefersForNewOnes(storePrefersTheKeyring: Bool) async throws {
        let secrets = MemorySecretStore()
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/token")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli"), redirectURI: "http://127.0.0.1:1/cb",
            state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        // Signed in with the file store: the refresh token is in the file.
        try FileCredentialStore(directory: directory).save(
            OAuthCredentials(
                response: TokenResponse(accessToken: "at-0", expiresIn: 1, refreshToken: "rt-0"), request: request,
                now: Date(timeIntervalSince1970: 0)))
        // A later refresh through a store that has a keyring, whether or not it prefers it for new sign-ins.
        let store = FileCredentialStore(directory: directory, secretStore: secrets, placesNewRefreshTokensInSecretStore: storePrefersTheKeyring)
        let endpoint = FakeHTTPClient { _ in
            HTTPResponse(status: 200, body: Array(#"{"access_token":"at-1","expires_in":60,"refresh_token":"rt-1"}"#.utf8))
        }
        _ = try await TokenSource(store: store, httpClient: endpoint, clock: TestClock(now: Date(timeIntervalSince1970: 100))).credentials()
        #expect(try store.loadDefault()?.refreshToken == "rt-1")
        #expect(secrets.lookups == 0 && secrets.value(account: "idp.example/client:cli") == nil)
    }
}
