import Foundation
import Glibc
import SFAuth
import Testing

@Suite struct FileCredentialStoreTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.path + "/sfauth-store-" + UUID().uuidString
    }

    func credentials(user: String, token: String = "at", expiresAt: Date? = nil) -> OAuthCredentials {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "c", scopes: ["api"]),
            redirectURI: "http://127.0.0.1:1/callback", state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        let payload = Base64URL.encode(Array(#"{"sub":"\#(user)"}"#.utf8))
        var credentials = OAuthCredentials(
            response: TokenResponse(accessToken: token, refreshToken: "rt", idToken: "h.\(payload).s"),
            request: request, now: Date(timeIntervalSince1970: 1_700_000_000))
        credentials.expiresAt = expiresAt
        return credentials
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }

    @Test func roundTripWithPrivatePermissions() throws {
        let store = FileCredentialStore(directory: directory)
        let alice = credentials(user: "alice", expiresAt: Date(timeIntervalSince1970: 1_700_003_600))
        let kept = try store.save(alice)
        #expect(kept.refreshTokenInSecretStore == false)  // the refresh token's place is recorded
        #expect(try store.load(identifier: alice.identifier) == kept)
        #expect(try store.loadDefault() == kept)
        #expect(mode(directory) == 0o700)
        #expect(mode(directory + "/accounts") == 0o700)
        #expect(mode(store.path(for: alice.identifier)) == 0o600)
        // No temporary files are left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/accounts")
        #expect(names == ["idp.example%2Falice.json"])
    }

    @Test func emptyStoreHasNothing() async throws {
        let store = FileCredentialStore(directory: directory)
        #expect(try store.loadDefault() == nil)
        #expect(try store.identifiers() == [])
        let error = await #expect(throws: OAuthError.self) { try await TokenSource(store: store).credentials() }
        #expect(error?.recovery == .logInAgain)
    }

    @Test func sameAccountTwiceIsOneAccount() throws {
        let store = FileCredentialStore(directory: directory)
        try store.save(credentials(user: "alice", token: "first"))
        try store.save(credentials(user: "alice", token: "second"))
        #expect(try store.identifiers() == ["idp.example/alice"])
        #expect(try store.loadDefault()?.accessToken == "second")
    }

    @Test func firstAccountIsDefaultAndLogoutSelectsFirstRemaining() throws {
        let store = FileCredentialStore(directory: directory)
        try store.save(credentials(user: "carol"))
        try store.save(credentials(user: "alice"))
        try store.save(credentials(user: "bob"))
        #expect(try store.defaultIdentifier() == "idp.example/carol")
        try store.delete(identifier: "idp.example/carol")
        #expect(try store.defaultIdentifier() == "idp.example/alice")
        try store.delete(identifier: "idp.example/bob")
        #expect(try store.defaultIdentifier() == "idp.example/alice")
        try store.delete(identifier: "idp.example/alice")
        #expect(try store.defaultIdentifier() == nil)
        try store.delete(identifier: "idp.example/nobody")
    }

    @Test func corruptFileIsAClearErrorAndIsKept() async throws {
        let store = FileCredentialStore(directory: directory)
        let alice = credentials(user: "alice")
        try store.save(alice)
        let path = store.path(for: alice.identifier)
        try Data("{\"accessToken\": 12".utf8).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: OAuthError.self) { try store.loadDefault() }
        guard case .storage(let message) = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        #expect(message.text.contains(path))
        #expect(message.remedy == .removeDamagedAccount(identifier: alice.identifier))
        #expect(error?.description.contains("sign in again") == true)
        #expect(FileManager.default.contents(atPath: path) == Data("{\"accessToken\": 12".utf8))
        // A token request reports the same error rather than "not signed in".
        await #expect(throws: OAuthError.storage(message)) { try await TokenSource(store: store).credentials() }
    }

    @Test func unreadableStoreIsAnError() throws {
        // The accounts directory is a file: every read fails with an OS error, not "nothing stored".
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/accounts"))
        try Data("idp.example/alice\n".utf8).write(to: URL(fileURLWithPath: directory + "/default"))
        let store = FileCredentialStore(directory: directory)
        #expect(throws: OAuthError.self) { try store.loadDefault() }
        #expect(throws: OAuthError.self) { try store.save(credentials(user: "alice")) }
    }

    @Test func validTokenIsReusedWithoutAnyRequest() async throws {
        let store = FileCredentialStore(directory: directory)
        try store.save(credentials(user: "alice", expiresAt: Date(timeIntervalSince1970: 1000)))
        let source = TokenSource(
            store: store, httpClient: FakeHTTPClient.refusingEveryRequest(), clock: TestClock(now: Date(timeIntervalSince1970: 900)))
        #expect(try await source.credentials().accessToken == "at")
    }

    @Test func aLockHeldElsewhereIsWaitedForSixtySecondsOnTheStoresClock() async throws {
        let holder = try await FileCredentialStore(directory: directory).lock(account: "idp.example/alice")
        defer { withExtendedLifetime(holder) {} }
        let clock = TestClock()
        let waiter = FileCredentialStore(directory: directory, clock: clock)
        let error = await #expect(throws: OAuthError.self) { try await waiter.lock(account: "idp.example/alice") }
        #expect(
            error?.description.contains("has held \(try waiter.lockPath(for: "idp.example/alice")) for more than 60") == true,
            "\(String(describing: error))")
        // Short pauses (at most 20 ms) until the deadline, then no more.
        #expect(clock.monotonicNow() >= .seconds(60) && clock.monotonicNow() < .seconds(60) + .milliseconds(20))
        #expect(clock.sleeps.allSatisfy { $0 <= .milliseconds(20) })
        // Another account's lock is not held: no wait at all.
        let other = try await waiter.lock(account: "idp.example/bob")
        withExtendedLifetime(other) {}
        #expect(clock.monotonicNow() < .seconds(60) + .milliseconds(20))
    }

    @Test func concurrentWritersLoseNothingAndLeaveValidFiles() async throws {
        let store = FileCredentialStore(directory: directory)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { try? store.save(self.credentials(user: "user\(index % 8)", token: "t\(index)")) }
            }
        }
        #expect(try store.identifiers().count == 8)
        for identifier in try store.identifiers() { #expect(try store.load(identifier: identifier) != nil) }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/accounts")
        #expect(names.allSatisfy { $0.hasSuffix(".json") && !$0.hasPrefix(".") })
    }

    @Test func aStoreDirectoryThatIsNotPrivateIsRefused() throws {
        let store = FileCredentialStore(directory: directory)
        try store.save(credentials(user: "alice"))
        chmod(directory, 0o777)
        let error = #expect(throws: OAuthError.self) { try store.loadDefault() }
        #expect(error?.description.contains("writable by everyone (mode 777)") == true, "\(String(describing: error))")
        #expect(error?.description.contains("chmod 700 \(directory)") == true)
        #expect(throws: OAuthError.self) { try store.save(credentials(user: "bob")) }
        chmod(directory, 0o770)
        #expect(throws: OAuthError.self) { try store.identifiers() }
        chmod(directory, 0o750)  // readable, not writable by others: ours, tightened on the next write
        #expect(try store.loadDefault() != nil)
        try store.save(credentials(user: "bob"))
        #expect(mode(directory) == 0o700)

        // A symbolic link in place of the directory is not followed.
        let link = directory + "-link"
        symlink(directory, link)
        defer { unlink(link) }
        let linked = #expect(throws: OAuthError.self) { try FileCredentialStore(directory: link).loadDefault() }
        #expect(linked?.description.contains("symbolic link") == true)

        // A directory of another user (tests run as root in CI; elsewhere this part cannot be set up).
        if getuid() == 0 {
            chown(directory, 4321, 4321)
            defer { chown(directory, 0, 0) }
            let foreign = #expect(throws: OAuthError.self) { try store.loadDefault() }
            #expect(foreign?.description.contains("belongs to user id 4321") == true, "\(String(describing: foreign))")
        }
    }

    @Test func locationFollowsXDG() throws {
        func directory(_ environment: [String: String], app: AppIdentity = .sfauth) throws(OAuthError) -> String {
            try EnvironmentSettings(prefix: "SFAUTH", environment: environment).credentialsDirectory(app: app)
        }
        #expect(try directory(["SFAUTH_HOME": "/x", "HOME": "/h"]) == "/x")
        #expect(try directory(["XDG_DATA_HOME": "/d", "HOME": "/h"]) == "/d/sfauth")
        #expect(try directory(["XDG_DATA_HOME": "rel", "HOME": "/h"]) == "/h/.local/share/sfauth")
        #expect(throws: OAuthError.self) { try directory([:]) }
        // A relative SFAUTH_HOME would be another directory in every working directory.
        let relative = #expect(throws: OAuthError.self) { try directory(["SFAUTH_HOME": "creds", "HOME": "/h"]) }
        #expect(relative?.recovery == .fixConfiguration)
        // Another app: its own directory, and its own variable (SFAUTH_HOME is not its business).
        let acme = AppIdentity(name: "acme", displayName: "Acme CLI")
        #expect(try directory(["XDG_DATA_HOME": "/d", "HOME": "/h", "SFAUTH_HOME": "/x"], app: acme) == "/x")
        #expect(
            try EnvironmentSettings(prefix: "ACME", environment: ["XDG_DATA_HOME": "/d", "SFAUTH_HOME": "/x"])
                .credentialsDirectory(app: acme) == "/d/acme")
        #expect(try StoreLocation.credentialsDirectory(app: acme, environment: ["HOME": "/h"]) == "/h/.local/share/acme")
    }
}
