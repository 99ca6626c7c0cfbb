import Foundation
import Glibc
import Testing

@testable import SFAuth

/// Selecting an account by name through the file store's name index, and the store's files reached
/// only through its checked directory.
@Suite struct AccountSelectionTests {
    let directory = FileManager.default.temporaryDirectory.path + "/sfauth-selection-" + UUID().uuidString
    var store: FileCredentialStore { FileCredentialStore(directory: directory) }

    func account(_ user: String, alias: String? = nil) -> OAuthCredentials {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
        var credentials = OAuthCredentials(
            identifier: "idp.example/\(user)", server: server, clientId: "c", redirectURI: "",
            accessToken: "at-\(user)", tokenType: "Bearer", issuedAt: Date())
        credentials.username = user
        credentials.alias = alias
        return credentials
    }

    @Test func namesAreSelectedThroughTheIndexAndTheResolversWordsAreUnchanged() throws {
        try store.save(account("alice", alias: "work"))
        try store.save(account("bob"))
        #expect(try store.identifiers(selectedBy: "work") == ["idp.example/alice"])
        #expect(try store.identifiers(selectedBy: "bob") == ["idp.example/bob"])
        #expect(try store.identifiers(selectedBy: "idp.example/bob") == ["idp.example/bob"])
        #expect(try store.identifiers(selectedBy: "carol") == [])
        let resolver = AccountResolver(store: store)
        #expect(try resolver.identifier(for: "work") == "idp.example/alice")
        #expect(throws: OAuthError.configuration("there is no stored account 'wrok'; did you mean 'work'?")) { try resolver.identifier(for: "wrok") }
        #expect(throws: OAuthError.configuration("there is no stored account 'zed'; the accounts are: work, bob")) {
            try resolver.identifier(for: "zed")
        }
    }

    @Test func anIndexMadeStaleBehindTheStoresBackIsRebuiltBySelection() throws {
        try store.save(account("alice", alias: "work"))
        // An account file another program wrote: the index cannot know it, and says so.
        var carol = account("carol", alias: "work")
        carol.refreshTokenInSecretStore = false
        let file = store.path(for: carol.identifier)
        try Data(CredentialFile.encode(carol)).write(to: URL(fileURLWithPath: file + ".new"))
        rename(file + ".new", file)
        #expect(try store.identifiers(selectedBy: "work") == ["idp.example/alice", "idp.example/carol"])
        #expect(throws: OAuthError.configuration("'work' matches several accounts (idp.example/alice, idp.example/carol); use the identifier")) {
            try AccountResolver(store: store).identifier(for: "work")
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/names/stamp"))
        #expect(try store.identifiers(selectedBy: "carol") == ["idp.example/carol"])
    }

    @Test func lockFilesAreReachedThroughTheStoreWithoutFollowingLinks() async throws {
        try store.save(account("alice"))
        let elsewhere = directory + "-elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: directory + "/locks")
        symlink(elsewhere, directory + "/locks")
        await #expect(throws: OAuthError.self) { try await store.lock(account: "idp.example/alice") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        unlink(directory + "/.lock")
        symlink(elsewhere + "/lock", directory + "/.lock")
        #expect(throws: OAuthError.self) { try store.save(account("bob")) }
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/lock"))
    }
}
