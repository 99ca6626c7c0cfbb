import Foundation
import Testing

@testable import SFAuth

/// The account rules: what a sign-in keeps and replaces, and what signing out forgets.
@Suite struct AccountBookTests {
    let directory = FileManager.default.temporaryDirectory.path + "/sfauth-book-" + UUID().uuidString
    var store: FileCredentialStore { FileCredentialStore(directory: directory) }
    static let server = AuthorizationServer(
        authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
        revocationEndpoint: "https://idp.example/revoke")

    func credentials(user: String?, refreshToken: String = "rt") -> OAuthCredentials {
        var credentials = OAuthCredentials(
            identifier: "", server: Self.server, clientId: "cli", redirectURI: "",
            accessToken: "at-\(user ?? "nobody")", tokenType: "Bearer", issuedAt: Date())
        credentials.refreshToken = refreshToken
        credentials.name(after: nil, grantUsername: user)
        return credentials
    }

    @Test func keepingReplacesTheSameAccountMovesTheAliasAndNeverMergesStrangers() async throws {
        let book = AccountBook(store: store)
        let alice = try await book.keep(credentials(user: "alice", refreshToken: "rt-1"), alias: "work", makeDefault: true)
        #expect(alice.replaced == nil && alice.credentials.alias == "work")
        let bob = try await book.keep(credentials(user: "bob"), alias: "work", makeDefault: false)
        #expect(try store.load(identifier: alice.credentials.identifier)?.alias == nil)  // the alias moved
        #expect(try store.defaultIdentifier() == alice.credentials.identifier)
        let again = try await book.keep(credentials(user: "alice", refreshToken: "rt-2"), alias: nil, makeDefault: true)
        #expect(again.replaced?.refreshToken == "rt-1")
        #expect(again.credentials.alias == nil && bob.credentials.alias == "work")
        // Two sign-ins whose user nobody named: two accounts, neither replacing the other.
        let first = try await book.keep(credentials(user: nil), alias: nil, makeDefault: false)
        let second = try await book.keep(credentials(user: nil), alias: nil, makeDefault: false)
        #expect(first.credentials.identifier.hasSuffix("/unidentified-1") && second.credentials.identifier.hasSuffix("/unidentified-2"))
        #expect(first.replaced == nil && second.replaced == nil)
    }

    @Test func forgettingRevokesThenRemovesAndKeepsWhatCannotBeRead() async throws {
        let book = AccountBook(store: store)
        let alice = try await book.keep(credentials(user: "alice"), alias: nil, makeDefault: true).credentials
        let revocations = FakeHTTPClient(always: .plain(200))
        guard
            case .forgotten(let gone, let report?) = try await book.forget(
                alice.identifier, revokingWith: TokenRevoker(httpClient: revocations),
                removingUnreadable: false)
        else {
            Issue.record("not forgotten with a revocation")
            return
        }
        #expect(gone.identifier == alice.identifier && report.isRevokedAtServer)
        #expect(revocations.count >= 1 && revocations.bodies.contains { $0.contains("token=rt") })
        #expect(try store.load(identifier: alice.identifier) == nil)
        guard case .notStored = try await book.forget(alice.identifier, revokingWith: nil, removingUnreadable: false) else {
            Issue.record("forgotten twice")
            return
        }

        let bob = try await book.keep(credentials(user: "bob"), alias: nil, makeDefault: true).credentials
        try Data("{ damaged".utf8).write(to: URL(fileURLWithPath: store.path(for: bob.identifier)))
        guard case .unreadableKept(let path, _) = try await book.forget(bob.identifier, revokingWith: nil, removingUnreadable: false) else {
            Issue.record("a damaged file was not kept")
            return
        }
        #expect(FileManager.default.fileExists(atPath: path))
        guard case .unreadableRemoved = try await book.forget(bob.identifier, revokingWith: nil, removingUnreadable: true) else {
            Issue.record("a damaged file was not removed when asked")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
