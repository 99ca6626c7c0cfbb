import Foundation
import Glibc
import SFAuthModel
import Testing

@testable import SFAuthStore

/// The store is opened once, trusted on that descriptor, and used through it.
struct StoreDirectoryTests {
    let fixture = StoreFixture()

    @Test func aMissingStoreIsNothingStoredAndIsCreatedPrivateForAWrite() throws {
        #expect(try StoreDirectory.open(fixture.path) == nil)
        let store = try StoreDirectory.openCreating(fixture.path)
        #expect(fixture.mode(fixture.path) == 0o700)
        _ = try store.privateSubdirectory("accounts")
        #expect(fixture.mode(fixture.path + "/accounts") == 0o700)
        // Ours but readable by others: accepted, and tightened by the next write.
        chmod(fixture.path, 0o750)
        #expect(try StoreDirectory.open(fixture.path) != nil)
        _ = try StoreDirectory.openCreating(fixture.path)
        #expect(fixture.mode(fixture.path) == 0o700)
    }

    @Test(arguments: [0o777, 0o770, 0o702] as [mode_t])
    func aStoreOthersCanWriteIsRefused(mode: mode_t) throws {
        _ = try StoreDirectory.openCreating(fixture.path)
        chmod(fixture.path, mode)
        #expect(throws: StoreFailure.untrusted(path: fixture.path, problem: .writableByOthers(mode: UInt32(mode)))) {
            try StoreDirectory.open(fixture.path)
        }
        #expect(throws: StoreFailure.self) { try StoreDirectory.openCreating(fixture.path) }
        #expect(fixture.mode(fixture.path) == mode)  // refused, not "fixed"
    }

    @Test func aSymbolicLinkOrAFileInPlaceOfTheStoreIsRefused() throws {
        let real = fixture.parent + "/real"
        mkdir(real, 0o700)
        symlink(real, fixture.path)
        let linked = #expect(throws: StoreFailure.self) { try StoreDirectory.open(fixture.path) }
        #expect(linked == .untrusted(path: fixture.path, problem: .symbolicLink))
        #expect(linked?.description.contains("is a symbolic link, which is not followed") == true)
        unlink(fixture.path)
        _ = FileManager.default.createFile(atPath: fixture.path, contents: Data("x".utf8))
        #expect(throws: StoreFailure.untrusted(path: fixture.path, problem: .notDirectory)) { try StoreDirectory.open(fixture.path) }
    }

    @Test func anotherUsersStoreIsRefused() throws {
        // Only root can give a directory away; elsewhere this case cannot be set up.
        guard getuid() == 0 else { return }
        _ = try StoreDirectory.openCreating(fixture.path)
        chown(fixture.path, 4321, 4321)
        #expect(throws: StoreFailure.untrusted(path: fixture.path, problem: .ownedByAnotherUser(owner: 4321, user: 0))) {
            try StoreDirectory.open(fixture.path)
        }
    }

    /// The race of issue 17 §1, made deterministic: the store is opened and checked, then another
    /// directory takes its path. Everything the operation reads and writes is still the checked one.
    @Test func nothingIsCreatedInAnotherUsersDirectory() throws {
        // As root only: `sudo -E` keeps the user's HOME, and root must not create directories there.
        guard geteuid() == 0 else { return }
        let home = fixture.parent + "/home"
        mkdir(home, 0o755)
        chown(home, 4321, 4321)
        #expect(throws: StoreFailure.anotherUsersDirectory(path: home, owner: 4321, user: 0)) {
            try StoreDirectory.openCreating(home + "/.local/share/sfauth")
        }
        #expect(access(home + "/.local", F_OK) != 0)
        // Root's own directories, and root-owned ones such as /tmp, are fine.
        chown(home, 0, 0)
        #expect(try StoreDirectory.openCreating(home + "/.local/share/sfauth").path == home + "/.local/share/sfauth")
    }

    @Test func whatIsReadAndWrittenIsTheDirectoryThatWasChecked() throws {
        try fixture.store([StoreFixture.account("alice")])
        let files = try fixture.reopen()
        // The attacker's store, swapped in under the same path.
        let attacker = fixture.parent + "/attacker"
        try FileManager.default.createDirectory(atPath: attacker + "/accounts", withIntermediateDirectories: true)
        try Data(CredentialFile.encode(StoreFixture.account("alice", token: "attacker's"))).write(
            to: URL(fileURLWithPath: attacker + "/accounts/idp.example%2Falice.json"))
        #expect(rename(fixture.path, fixture.parent + "/moved") == 0)
        #expect(rename(attacker, fixture.path) == 0)

        let record = try #require(try files.record(of: "idp.example/alice"))
        #expect(try CredentialFile.decode(record).accessToken == "token-of-alice")
        #expect(try files.defaultIdentifier() == "idp.example/alice")
        try files.store.writeAtomically(Array("written\n".utf8), to: "probe")
        #expect(FileManager.default.fileExists(atPath: fixture.parent + "/moved/probe"))
        #expect(!FileManager.default.fileExists(atPath: fixture.path + "/probe"))
    }

    @Test func filesAreReachedWithoutFollowingSymbolicLinks() throws {
        let files = try fixture.store([StoreFixture.account("alice")])
        let elsewhere = fixture.parent + "/elsewhere.json"
        try Data(CredentialFile.encode(StoreFixture.account("bob"))).write(to: URL(fileURLWithPath: elsewhere))
        symlink(elsewhere, fixture.path + "/accounts/idp.example%2Fbob.json")
        let refused = #expect(throws: FileFailure.self) { try files.record(of: "idp.example/bob") }
        #expect(refused?.code == ELOOP)
        symlink(elsewhere, fixture.path + "/.lock")
        #expect(throws: FileFailure.self) { try files.store.withExclusiveLock(".lock") { () throws(FileFailure) in } }
    }

    @Test func atomicWritesLeaveNoTemporaryFilesAndOrphansAreRemoved() throws {
        let files = try fixture.store([StoreFixture.account("alice")])
        let accounts = try #require(files.accounts)
        // A temporary file of a writer that died (pid 2^22+1 is above Linux's pid_max default).
        _ = FileManager.default.createFile(atPath: fixture.path + "/accounts/.idp.example%2Fbob.json.4194305.77.tmp", contents: Data())
        try files.write(StoreFixture.account("carol"))
        #expect(try accounts.names().sorted() == ["idp.example%2Falice.json", "idp.example%2Fcarol.json"])
        #expect(fixture.mode(fixture.path + "/accounts/idp.example%2Fcarol.json") == 0o600)
    }

    @Test func filesAreReadWholeAndTooLargeOnesRefused() throws {
        let store = try StoreDirectory.openCreating(fixture.path)
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        try store.writeAtomically(big, to: "big")
        #expect(try store.read("big") == big)
        #expect(try store.read("big", limit: 70_000) == big)
        #expect(throws: FileFailure.self) { try store.read("big", limit: 69_999) }
        try store.writeAtomically([], to: "empty")
        #expect(try store.read("empty") == [])
        #expect(try store.read("missing") == nil)
    }
}
