import Foundation
import Testing

@testable import SFAuth

/// A refresh token kept in the keyring is revoked like one kept in the file — or the report says why
/// it was not; never left alive at the server without a word. (The real keyring and server: the
/// acme logout test in Tests/CLI/test_example_acme.py.)
@Suite struct TokenRevokerTests {
    let directory = FileManager.default.temporaryDirectory.path + "/sfauth-revoker-" + UUID().uuidString
    let secrets = MemorySecretStore()
    static let server = AuthorizationServer(
        authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
        revocationEndpoint: "https://idp.example/revoke")

    /// alice's account, stored with its refresh token in the (in-memory) keyring.
    func storedInTheKeyring() throws -> (FileCredentialStore, OAuthCredentials) {
        let store = FileCredentialStore(directory: directory, secretStore: secrets)
        var credentials = OAuthCredentials(
            identifier: "", server: Self.server, clientId: "cli", redirectURI: "",
            accessToken: "at-alice", tokenType: "Bearer", issuedAt: Date())
        credentials.refreshToken = "rt-alice"
        credentials.name(after: nil, grantUsername: "alice")
        try store.save(credentials)
        let stored = try #require(try store.load(identifier: credentials.identifier))
        #expect(stored.refreshToken == nil && stored.refreshTokenPlace == .secretStore)  // as a stored record reads
        return (store, stored)
    }

    @Test func theRefreshTokenIsReadFromTheKeyringItIsKeptIn() async throws {
        let (store, stored) = try storedInTheKeyring()
        let server = FakeHTTPClient(always: .plain(200))
        let report = await TokenRevoker(httpClient: server).revoke(stored, keptIn: store)
        #expect(report.entries == [.init(token: .refreshToken, status: .revoked), .init(token: .accessToken, status: .revoked)])
        #expect(
            server.bodies == [
                "token=rt-alice&token_type_hint=refresh_token&client_id=cli",
                "token=at-alice&token_type_hint=access_token&client_id=cli",
            ])
    }

    @Test func aKeyringThatCannotBeReadIsReportedAndTheAccessTokenStillRevoked() async throws {
        let (store, stored) = try storedInTheKeyring()
        secrets.fail = true
        let server = FakeHTTPClient(always: .plain(200))
        let report = await TokenRevoker(httpClient: server).revoke(stored, keptIn: store)
        #expect(
            report.entries == [
                .init(token: .refreshToken, status: .failed(.storage("the test keyring is locked"))),
                .init(token: .accessToken, status: .revoked),
            ])
        #expect(!report.isRevokedAtServer)
        #expect(
            report.summary == "the refresh token could not be read (the test keyring is locked), so it was not revoked "
                + "at idp.example; the access token was revoked")
        #expect(server.bodies == ["token=at-alice&token_type_hint=access_token&client_id=cli"])
    }

    @Test func withoutTheStoreAKeyringTokenIsReportedNotSkipped() async throws {
        let (_, stored) = try storedInTheKeyring()
        let report = await TokenRevoker(httpClient: FakeHTTPClient(always: .plain(200))).revoke(stored, keptIn: nil)
        guard case .failed(.storage(let problem))? = report.status(of: .refreshToken) else {
            Issue.record("the keyring's refresh token was skipped: \(report.entries)")
            return
        }
        #expect(problem.text == "the refresh token of alice is kept in the keyring, and no store was given to read it from")
        #expect(report.status(of: .accessToken) == .revoked)
        #expect(!report.isRevokedAtServer)
    }

    @Test func aRefreshTokenTheKeyringNoLongerHasIsNothingToRevoke() async throws {
        let (store, stored) = try storedInTheKeyring()
        try secrets.deleteSecret(account: stored.identifier, kind: "refresh_token")
        let report = await TokenRevoker(httpClient: FakeHTTPClient(always: .plain(200))).revoke(stored, keptIn: store)
        #expect(report.entries == [.init(token: .accessToken, status: .revoked)])
    }

    @Test func forgettingRevokesTheKeyringsRefreshTokenThenRemovesIt() async throws {
        let (store, stored) = try storedInTheKeyring()
        let server = FakeHTTPClient(always: .plain(200))
        guard
            case .forgotten(_, let report?) = try await AccountBook(store: store)
                .forget(stored.identifier, revokingWith: TokenRevoker(httpClient: server), removingUnreadable: false)
        else {
            Issue.record("not forgotten with a revocation")
            return
        }
        #expect(report.isRevokedAtServer)
        #expect(server.bodies.first == "token=rt-alice&token_type_hint=refresh_token&client_id=cli")
        #expect(secrets.value(account: stored.identifier) == nil)
        #expect(try store.load(identifier: stored.identifier) == nil)
    }
}
