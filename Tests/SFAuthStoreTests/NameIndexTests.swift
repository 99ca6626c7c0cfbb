import Foundation
import Glibc
import SFAuthModel
import Testing

@testable import SFAuthStore

/// Selecting by name reads the name index and the account it names; the index is kept by every
/// write, known stale when something else changed the accounts, and rebuilt.
struct NameIndexTests {
    let fixture = StoreFixture()

    @Test func theFormatRoundTripsAndMatchesWholeNamesOnly() {
        let entries = [
            NameIndex.Entry(name: "bob smith", identifier: "idp.example/b"),
            NameIndex.Entry(name: "bob", identifier: "idp.example/b2"),
            NameIndex.Entry(name: "bobby", identifier: "idp.example/b3"),
        ]
        let bytes = NameIndex.contents(of: entries)
        #expect(String(decoding: bytes, as: UTF8.self) == "bob idp.example%2Fb2\nbob%20smith idp.example%2Fb\nbobby idp.example%2Fb3\n")
        #expect(NameIndex.entries(in: bytes) == entries.sorted())
        #expect(NameIndex.identifiers(named: "bob", inBucket: bytes) == ["idp.example/b2"])
        #expect(NameIndex.identifiers(named: "bo", inBucket: bytes) == [])
        // Buckets: two hex digits, the same in every process (not Swift's seeded Hasher).
        #expect(NameIndex.bucket(of: "") == "a0")
        #expect(NameIndex.bucket(of: "alice") == NameIndex.bucket(of: "alice"))
        #expect(NameIndex.bucket(of: "alice").count == 2)
    }

    @Test func aNameSelectsByTheIndexWithoutReadingOtherAccounts() throws {
        try fixture.store([StoreFixture.account("alice", alias: "work", email: "a@example.com"), StoreFixture.account("bob")])
        let files = try fixture.reopen()
        #expect(files.select("work") == .one("idp.example/alice", StoreFixture.account("alice", alias: "work", email: "a@example.com")))
        #expect(files.select("a@example.com") == .one("idp.example/alice", StoreFixture.account("alice", alias: "work", email: "a@example.com")))
        #expect(files.select("bob") == .one("idp.example/bob", StoreFixture.account("bob")))
        #expect(files.select("idp.example/bob") == .one("idp.example/bob", nil))  // an exact identifier wins
        #expect(files.select("nobody") == .none)
        // Proof that other records are not read: bob's file damaged, alice still selected by name.
        try Data("{ damaged".utf8).write(to: URL(fileURLWithPath: fixture.path + "/accounts/idp.example%2Fbob.json"))
        #expect(files.select("work") == .one("idp.example/alice", StoreFixture.account("alice", alias: "work", email: "a@example.com")))
    }

    @Test func aNameSeveralAccountsShareSelectsThemAll() throws {
        try fixture.store([StoreFixture.account("alice", email: "shared"), StoreFixture.account("bob", email: "shared")])
        #expect(try fixture.reopen().select("shared") == .several(["idp.example/alice", "idp.example/bob"]))
    }

    @Test func anExactAliasWinsOverAUsernameOrEmail() throws {
        let aliased = StoreFixture.account("alice", alias: "bob")
        try fixture.store([aliased, StoreFixture.account("bob"), StoreFixture.account("carol", email: "bob")])
        let files = try fixture.reopen()
        #expect(files.select("bob") == .one("idp.example/alice", aliased))
        // The same rule over every record, as the main program applies it when the index cannot tell.
        #expect(AccountNames.identifiers(matching: "bob", in: try files.records()) == ["idp.example/alice"])
        #expect(AccountNames.identifiers(matching: "idp.example/bob", in: try files.records()) == ["idp.example/bob"])
    }

    @Test func savesRemovalsAndAliasMovesKeepTheIndex() throws {
        let files = try fixture.store([StoreFixture.account("alice", alias: "work"), StoreFixture.account("bob")])
        // The alias moves to bob (the library clears it on alice, then gives it to bob).
        try files.write(StoreFixture.account("alice"))
        try files.write(StoreFixture.account("bob", alias: "work"))
        #expect(try fixture.reopen().select("work") == .one("idp.example/bob", StoreFixture.account("bob", alias: "work")))
        try files.remove("idp.example/bob")
        #expect(try fixture.reopen().select("work") == .none)
        #expect(try fixture.reopen().select("bob") == .none)
        #expect(try fixture.reopen().select("alice") == .one("idp.example/alice", StoreFixture.account("alice")))
    }

    @Test func aChangeBehindTheStoresBackMakesItStaleUntilRebuilt() throws {
        let files = try fixture.store([StoreFixture.account("alice", alias: "work")])
        #expect(try fixture.reopen().select("work") != .unknown)
        // An older sfauth adds an account with the same name: a current-looking index would miss it.
        try fixture.writeBehindTheStoresBack(StoreFixture.account("carol", alias: "work"))
        #expect(try fixture.reopen().select("work") == .unknown)
        #expect(try fixture.reopen().select("carol") == .unknown)
        try files.rebuildNameIndex()
        #expect(try fixture.reopen().select("work") == .several(["idp.example/alice", "idp.example/carol"]))
        #expect(try fixture.reopen().select("carol") == .one("idp.example/carol", StoreFixture.account("carol", alias: "work")))
        // The store's own writes keep the rebuilt index current.
        try files.write(StoreFixture.account("dave"))
        #expect(try fixture.reopen().select("dave") == .one("idp.example/dave", StoreFixture.account("dave")))
    }

    @Test func aMissingIndexCannotTellAndARecordThatContradictsItIsNotBelieved() throws {
        let files = try fixture.store([StoreFixture.account("alice", alias: "work")])
        // A record edited in place (no directory time changes): the hit is checked against it.
        let path = fixture.path + "/accounts/idp.example%2Falice.json"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.truncateFile(atOffset: 0)
        handle.write(Data(CredentialFile.encode(StoreFixture.account("alice", alias: "home"))))
        handle.closeFile()
        #expect(try fixture.reopen().select("work") == .unknown)
        // No index at all (a store written by an older sfauth).
        files.store.removeSubdirectory(NameIndex.directoryName)
        #expect(try fixture.reopen().select("home") == .unknown)
        #expect(try fixture.reopen().select("idp.example/alice") == .one("idp.example/alice", nil))
    }

    @Test func anUnreadableRecordMakesTheIndexStaleRatherThanWrong() throws {
        let files = try fixture.store([StoreFixture.account("alice", alias: "work")])
        let path = fixture.path + "/accounts/idp.example%2Falice.json"
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.truncateFile(atOffset: 0)
        handle.closeFile()
        // Its old names cannot be taken out of the index: the write leaves the index stale.
        try files.write(StoreFixture.account("alice", alias: "home"))
        #expect(try fixture.reopen().select("home") == .unknown)
        try files.rebuildNameIndex()
        #expect(try fixture.reopen().select("home") == .one("idp.example/alice", StoreFixture.account("alice", alias: "home")))
        #expect(try fixture.reopen().select("work") == .none)
    }
}
