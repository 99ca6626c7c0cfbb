import Foundation
import Glibc
import Testing

@testable import SFAuth

// Tests of the Secret Service keyring store against a real gnome-keyring.
//
// Run them with `scripts/with-keyring swift test --filter SecretService` (scripts/test does so for
// the whole suite). See `KeyringTestEnvironment` for when they run: with SFAUTH_TEST_KEYRING=1 they
// must pass; with SFAUTH_REQUIRE_KEYRING=1 and no keyring they fail; otherwise the ones needing a
// keyring are disabled and only the no-bus / no-libsecret tests run.
//
// Cases that need another session bus, or a fresh libsecret, run in a child process (Swift Testing
// exit tests): GLib connects to the session bus once per process and keeps that connection.

/// The real keyring of `scripts/with-keyring`, in this process. Serialized: the tests share it.
@Suite(
    "SecretService: a real gnome-keyring",
    .serialized,
    .enabled(if: KeyringTestEnvironment.shouldRun, "no test keyring: run under scripts/with-keyring (SFAUTH_TEST_KEYRING=1)"),
    .timeLimit(.minutes(1))
)
struct SecretServiceKeyringTests {
    let store = SecretServiceStore()
    let run = UUID().uuidString.prefix(8)

    init() throws {
        try KeyringTestEnvironment.check()
    }

    func account(_ name: String) -> String { "https://login.example.com/\(run)/\(name)" }

    @Test func probeFindsTheUnlockedKeyring() {
        #expect(SecretServiceStore.probe(timeout: .seconds(3)) == .available)
        #expect(store.displayName == "the Secret Service keyring")
    }

    @Test func storesLooksUpReplacesAndDeletes() throws {
        let account = account("round-trip")
        let kind = "refresh_token"
        #expect(try store.secret(account: account, kind: kind) == nil)

        let unicode = "5Aep861…ünïcødé-✓-🔑-\u{2028}-rt"
        try store.setSecret(unicode, account: account, kind: kind)
        #expect(try store.secret(account: account, kind: kind) == unicode)

        let long = String((0..<16_384).map { i in Character(UnicodeScalar(UInt8(33 + i % 94))) })
        try store.setSecret(long, account: account, kind: kind)
        #expect(try store.secret(account: account, kind: kind) == long)

        try store.deleteSecret(account: account, kind: kind)
        #expect(try store.secret(account: account, kind: kind) == nil)
        try store.deleteSecret(account: account, kind: kind)  // none left: no error
    }

    @Test func replacingKeepsOneItem() throws {
        let account = account("replace")
        for value in ["one", "two", "three"] {
            try store.setSecret(value, account: account, kind: "refresh_token")
        }
        let found = try runTool(["secret-tool", "search", "--all", "account", account, "kind", "refresh_token"])
        #expect(found.output.components(separatedBy: "secret = ").count - 1 == 1, "\(found.output)")
        #expect(found.output.contains("label = sfauth refresh token for \(account)"))
        #expect(found.output.contains("schema = io.sfauth.Credentials"))
        #expect(try store.secret(account: account, kind: "refresh_token") == "three")
        try store.deleteSecret(account: account, kind: "refresh_token")
    }

    @Test func accountsAndKindsDoNotSeeEachOther() throws {
        let alice = account("alice")
        let bob = account("bob")
        try store.setSecret("alice-rt", account: alice, kind: "refresh_token")
        try store.setSecret("bob-rt", account: bob, kind: "refresh_token")
        try store.setSecret("alice-other", account: alice, kind: "client_secret")
        #expect(try store.secret(account: alice, kind: "refresh_token") == "alice-rt")
        #expect(try store.secret(account: bob, kind: "refresh_token") == "bob-rt")
        #expect(try store.secret(account: alice, kind: "client_secret") == "alice-other")
        #expect(try store.secret(account: bob, kind: "client_secret") == nil)

        try store.deleteSecret(account: alice, kind: "refresh_token")
        #expect(try store.secret(account: alice, kind: "refresh_token") == nil)
        #expect(try store.secret(account: bob, kind: "refresh_token") == "bob-rt")
        #expect(try store.secret(account: alice, kind: "client_secret") == "alice-other")
        try store.deleteSecret(account: bob, kind: "refresh_token")
        try store.deleteSecret(account: alice, kind: "client_secret")
    }

    /// Two tools that embed SFAuth, on one machine, with one keyring and one XDG data directory:
    /// the same account identifier in both, and neither sees the other's account or refresh token.
    @Test func twoAppsNeverSeeEachOthersAccounts() throws {
        let data = FileManager.default.temporaryDirectory.path + "/sfauth-apps-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let environment = ["XDG_DATA_HOME": data, "HOME": "/nonexistent"]
        let acme = AppIdentity(name: "acme-\(run.lowercased())", displayName: "Acme CLI")
        let stores = try [AppIdentity.sfauth, acme].map { app throws(OAuthError) in
            FileCredentialStore(
                directory: try StoreLocation.credentialsDirectory(app: app, environment: environment),
                secretStore: SecretServiceStore(app: app))
        }
        #expect(stores.map(\.directory) == [data + "/sfauth", data + "/" + acme.name])
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
        let identifier = account("two-apps")
        for (store, name) in zip(stores, ["sfauth", "acme"]) {
            var credentials = OAuthCredentials(
                identifier: identifier, server: server, clientId: name, redirectURI: "",
                accessToken: "at-\(name)", tokenType: "Bearer", issuedAt: Date())
            credentials.refreshToken = "rt-\(name)"
            try store.save(credentials)
        }
        defer { for store in stores { try? store.delete(identifier: identifier) } }
        for (store, name) in zip(stores, ["sfauth", "acme"]) {
            let loaded = try #require(try store.load(identifier: identifier))
            #expect(loaded.accessToken == "at-\(name)")
            #expect(loaded.refreshTokenInSecretStore == true)
            #expect(try store.refreshToken(of: loaded) == "rt-\(name)")
        }
        // Signing out of one leaves the other's refresh token where it was.
        try stores[1].delete(identifier: identifier)
        #expect(try stores[1].load(identifier: identifier) == nil)
        #expect(try SecretServiceStore(app: acme).secret(account: identifier, kind: "refresh_token") == nil)
        #expect(try stores[0].refreshToken(of: try #require(try stores[0].load(identifier: identifier))) == "rt-sfauth")
    }

    @Test func itemsOfOtherSchemasAreNeitherReturnedNorDeleted() throws {
        let account = account("schemas")
        // secret-tool stores without a schema (no xdg:schema attribute), with the same attributes.
        // (First: gnome-keyring's "replace" matches on the attributes given, so a store without a
        // schema replaces any item that has them, whatever its schema.)
        let stored = try runTool(
            ["secret-tool", "store", "--label=not sfauth", "account", account, "kind", "refresh_token"],
            input: "no-schema")
        #expect(stored.status == 0)
        let other = SecretServiceStore(timeout: .seconds(3), schemaName: "io.example.SomethingElse")
        try other.setSecret("other-schema", account: account, kind: "refresh_token")

        #expect(try store.secret(account: account, kind: "refresh_token") == nil)
        try store.setSecret("ours", account: account, kind: "refresh_token")
        #expect(try store.secret(account: account, kind: "refresh_token") == "ours")
        try store.deleteSecret(account: account, kind: "refresh_token")
        #expect(try store.secret(account: account, kind: "refresh_token") == nil)

        #expect(try other.secret(account: account, kind: "refresh_token") == "other-schema")
        try other.deleteSecret(account: account, kind: "refresh_token")
        // With the other schema's item gone, the schemaless item secret-tool wrote must still be there.
        let looked = try runTool(["secret-tool", "lookup", "account", account, "kind", "refresh_token"])
        #expect(looked.output == "no-schema", "our delete left the schemaless item alone")
        try runTool(["secret-tool", "clear", "account", account, "kind", "refresh_token"])
    }

    @Test func missingSecretIsNil() throws {
        #expect(try store.secret(account: account("nobody"), kind: "refresh_token") == nil)
    }

    @Test func concurrentCallsFromManyThreads() async throws {
        let accounts = (0..<8).map { account("parallel-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, account) in accounts.enumerated() {
                group.addTask {
                    let store = SecretServiceStore()
                    for round in 0..<5 {
                        try store.setSecret("rt-\(index)-\(round)", account: account, kind: "refresh_token")
                        #expect(try store.secret(account: account, kind: "refresh_token") == "rt-\(index)-\(round)")
                    }
                    try store.deleteSecret(account: account, kind: "refresh_token")
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func rejectsNulAndEmptyNamesBeforeTouchingTheKeyring() {
        #expect(storageMessage { try store.setSecret("a\u{0}b", account: account("nul"), kind: "refresh_token") }?.contains("NUL") == true)
        #expect(storageMessage { _ = try store.secret(account: "", kind: "refresh_token") }?.contains("non-empty") == true)
        #expect(storageMessage { try store.deleteSecret(account: "a\u{0}", kind: "refresh_token") }?.contains("NUL") == true)
    }

    /// The first lookup in a process loads libsecret, connects and opens a session; later ones are
    /// one D-Bus round trip. Measured in a fresh process; printed for the record.
    @Test func firstAndLaterLookupCost() async throws {
        let timingAccount = account("timing")
        try store.setSecret("timing-rt", account: timingAccount, kind: "refresh_token")
        defer { try? store.deleteSecret(account: timingAccount, kind: "refresh_token") }
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [timingAccount = timingAccount as String] in
            let store = SecretServiceStore()
            var start = monotonicMilliseconds()
            let first = try store.secret(account: timingAccount, kind: "refresh_token")
            let firstCost = monotonicMilliseconds() - start
            var later: [Double] = []
            for _ in 0..<50 {
                start = monotonicMilliseconds()
                let again = try store.secret(account: timingAccount, kind: "refresh_token")
                later.append(monotonicMilliseconds() - start)
                guard again == "timing-rt" else { exit(2) }
            }
            later.sort()
            guard first == "timing-rt" else { exit(3) }
            print(String(format: "first %.2f ms, later median %.2f ms, p90 %.2f ms", firstCost, later[25], later[45]))
            #expect(firstCost < 1000)
            #expect(later[25] < 100)
        }
        if let result {
            print("SecretServiceStore lookup cost: \(String(decoding: result.standardOutputContent, as: UTF8.self))", terminator: "")
        }
    }
}

/// Failure modes, each in a fresh process with its own environment.
@Suite("SecretService: failure modes", .timeLimit(.minutes(1)))
struct SecretServiceFailureTests {
    /// No session bus at all: the probe answers at once without loading libsecret, and every call
    /// says so (and what to do).
    @Test func noSessionBus() async {
        await #expect(processExitsWith: .success) {
            unsetenv("DBUS_SESSION_BUS_ADDRESS")
            unsetenv("XDG_RUNTIME_DIR")
            let start = monotonicMilliseconds()
            let availability = SecretServiceStore.probe(timeout: .seconds(3))
            let elapsed = monotonicMilliseconds() - start
            #expect(elapsed < 2000, "probe took \(elapsed) ms: without a bus it must answer at once, not wait")
            guard case .unavailable(let reason) = availability else {
                Issue.record("probe said available")
                return
            }
            #expect(reason.contains("no D-Bus session bus"))
            #expect(reason.contains("DBUS_SESSION_BUS_ADDRESS is not set"))

            let store = SecretServiceStore()
            let message = storageMessage { _ = try store.secret(account: "a", kind: "refresh_token") }
            #expect(message?.hasPrefix("no D-Bus session bus") == true, "\(message ?? "no error")")
            #expect(message?.contains("DBUS_SESSION_BUS_ADDRESS") == true)
            #expect(message?.contains("--storage") == false)  // a flag `sfauth token` does not have
            #expect(storageMessage { try store.setSecret("x", account: "a", kind: "refresh_token") } == message)
            #expect(storageMessage { try store.deleteSecret(account: "a", kind: "refresh_token") } == message)
            #expect(monotonicMilliseconds() - start < 1000)
        }
    }

    /// DBUS_SESSION_BUS_ADDRESS names a socket that is not there.
    @Test func busAddressWithNothingBehindIt() async {
        await #expect(processExitsWith: .success) {
            setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/sfauth-test/bus", 1)
            let start = monotonicMilliseconds()
            let availability = SecretServiceStore.probe(timeout: .seconds(3))
            #expect(monotonicMilliseconds() - start < 1000)
            guard case .unavailable(let reason) = availability else {
                Issue.record("probe said available")
                return
            }
            #expect(reason.contains("no D-Bus session bus"), "\(reason)")
            #expect(reason.contains("(unix:path=/nonexistent/sfauth-test/bus: Could not connect: "), "\(reason)")
            let message = storageMessage { _ = try SecretServiceStore().secret(account: "a", kind: "refresh_token") }
            #expect(message?.contains("no D-Bus session bus") == true, "\(message ?? "no error")")
            #expect(monotonicMilliseconds() - start < 1000)
        }
    }

    /// libsecret cannot be loaded.
    @Test func libsecretMissing() async {
        await #expect(processExitsWith: .success) {
            setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/sfauth-test/bus", 1)
            let store = SecretServiceStore(
                timeout: .seconds(3), schemaName: SecretServiceStore.schemaName,
                libraryNames: ["libsecret-sfauth-missing.so.0"])
            let message = storageMessage { _ = try store.secret(account: "a", kind: "refresh_token") }
            #expect(message?.hasPrefix("libsecret is not installed") == true, "\(message ?? "no error")")
            #expect(message?.contains("install libsecret-1-0") == true)
            #expect(store.availability() != .available)
        }
    }

    /// A session bus with no Secret Service daemon (and none activatable).
    @Test(.enabled(if: KeyringTestEnvironment.shouldRun, "needs dbus-daemon: run under scripts/with-keyring"))
    func busWithoutDaemon() async throws {
        try KeyringTestEnvironment.check()
        let bus = try PrivateBus()
        defer { bus.stop() }
        let address = bus.address
        await #expect(processExitsWith: .success) { [address = address as String] in
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            let start = monotonicMilliseconds()
            let availability = SecretServiceStore.probe(timeout: .seconds(3))
            #expect(monotonicMilliseconds() - start < 1000)
            guard case .unavailable(let reason) = availability else {
                Issue.record("probe said available")
                return
            }
            #expect(reason.hasPrefix("no Secret Service daemon is running"), "\(reason)")
            let store = SecretServiceStore()
            let message = storageMessage { _ = try store.secret(account: "a", kind: "refresh_token") }
            #expect(message?.hasPrefix("no Secret Service daemon is running") == true, "\(message ?? "no error")")
            #expect(message?.contains("start one") == true)
            #expect(message?.contains("--storage") == false)
            #expect(storageMessage { try store.setSecret("x", account: "a", kind: "refresh_token") }?.hasPrefix("no Secret Service daemon") == true)
            #expect(storageMessage { try store.deleteSecret(account: "a", kind: "refresh_token") }?.hasPrefix("no Secret Service daemon") == true)
            #expect(monotonicMilliseconds() - start < 3000)
        }
    }

    /// A daemon that never answers (the bus starts it, it never takes the name): every call gives
    /// up after the timeout with a clear message.
    @Test(.enabled(if: KeyringTestEnvironment.shouldRun, "needs dbus-daemon: run under scripts/with-keyring"))
    func daemonThatNeverAnswers() async throws {
        try KeyringTestEnvironment.check()
        let bus = try PrivateBus(activatesNeverAnsweringSecretService: true)
        defer { bus.stop() }
        let address = bus.address
        await #expect(processExitsWith: .success) { [address = address as String] in
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            let store = SecretServiceStore(timeout: .milliseconds(500))
            var start = monotonicMilliseconds()
            let message = storageMessage { try store.setSecret("x", account: "a", kind: "refresh_token") }
            var elapsed = monotonicMilliseconds() - start
            #expect(message == "the keyring did not answer within 0.5 s; its daemon may be hung: try again, or restart it")
            // Gives up at the timeout (the daemon never answers); the upper bound is loose for a shared machine.
            #expect(elapsed >= 450 && elapsed < 10_000, "gave up after \(elapsed) ms")

            start = monotonicMilliseconds()
            let lookup = storageMessage { _ = try store.secret(account: "a", kind: "refresh_token") }
            elapsed = monotonicMilliseconds() - start
            #expect(lookup?.hasPrefix("the keyring did not answer within 0.5 s") == true, "\(lookup ?? "no error")")
            #expect(elapsed < 10_000, "gave up after \(elapsed) ms")

            start = monotonicMilliseconds()
            let availability = SecretServiceStore.probe(timeout: .milliseconds(300))
            elapsed = monotonicMilliseconds() - start
            #expect(availability == .unavailable(reason: "the keyring did not answer within 0.3 s"))
            #expect(elapsed < 10_000, "probe gave up after \(elapsed) ms")
        }
    }

    /// A locked collection: lookups (of stored and of missing secrets), stores and deletes all say
    /// "locked" instead of "not found", and nothing prompts; after unlocking, the secret is there.
    /// Uses a gnome-keyring of its own, so locking it cannot disturb other tests.
    @Test(.enabled(if: KeyringTestEnvironment.shouldRun, "needs gnome-keyring: run under scripts/with-keyring"))
    func lockedCollection() async throws {
        try KeyringTestEnvironment.check()
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let address = keyring.busAddress
        let control = keyring.controlDirectory
        let password = keyring.password
        await #expect(processExitsWith: .success) { [address = address as String, control = control as String, password = password as String] in
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            let store = SecretServiceStore()
            do {
                try store.setSecret("before-lock", account: "locked-account", kind: "refresh_token")
                #expect(try store.secret(account: "locked-account", kind: "refresh_token") == "before-lock")

                try LoginCollection.lock(busAddress: address)
                #expect(try LoginCollection.isLocked(busAddress: address))

                let locked = "the keyring is locked; unlock it (e.g. log in to the desktop)"
                let start = monotonicMilliseconds()
                #expect(storageMessage { _ = try store.secret(account: "locked-account", kind: "refresh_token") } == locked)
                #expect(storageMessage { _ = try store.secret(account: "never-stored", kind: "refresh_token") } == locked)
                #expect(storageMessage { try store.setSecret("during-lock", account: "locked-account", kind: "refresh_token") } == locked)
                #expect(storageMessage { try store.deleteSecret(account: "locked-account", kind: "refresh_token") } == locked)
                #expect(SecretServiceStore.probe() == .unavailable(reason: "the keyring is locked"))
                #expect(monotonicMilliseconds() - start < 2000, "no prompt, no wait")
                #expect(try LoginCollection.isLocked(busAddress: address), "nothing unlocked it")

                try LoginCollection.unlock(controlDirectory: control, password: password)
                #expect(try LoginCollection.isLocked(busAddress: address) == false)
                #expect(SecretServiceStore.probe() == .available)
                #expect(try store.secret(account: "locked-account", kind: "refresh_token") == "before-lock")
                try store.deleteSecret(account: "locked-account", kind: "refresh_token")
            } catch {
                Issue.record("unexpected error: \(error)")
            }
        }
    }

    /// A daemon that stops answering in the middle of a session (SIGSTOP): calls give up after the
    /// timeout, and work again once it answers.
    @Test(.enabled(if: KeyringTestEnvironment.shouldRun, "needs gnome-keyring: run under scripts/with-keyring"))
    func daemonStoppedMidSession() async throws {
        try KeyringTestEnvironment.check()
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let address = keyring.busAddress
        await #expect(processExitsWith: .success) { [address = address as String] in
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            do {
                let daemon = try LoginCollection.processID(of: "org.freedesktop.secrets", busAddress: address)
                let store = SecretServiceStore(timeout: .milliseconds(700))
                try store.setSecret("before-stop", account: "stopped", kind: "refresh_token")
                #expect(try store.secret(account: "stopped", kind: "refresh_token") == "before-stop")

                kill(daemon, SIGSTOP)
                var start = monotonicMilliseconds()
                let lookup = storageMessage { _ = try store.secret(account: "stopped", kind: "refresh_token") }
                let elapsed = monotonicMilliseconds() - start
                start = monotonicMilliseconds()
                let stored = storageMessage { try store.setSecret("during-stop", account: "stopped", kind: "refresh_token") }
                let storeElapsed = monotonicMilliseconds() - start
                kill(daemon, SIGCONT)

                #expect(lookup?.hasPrefix("the keyring did not answer within 0.7 s") == true, "\(lookup ?? "no error")")
                #expect(elapsed >= 650 && elapsed < 10_000, "lookup gave up after \(elapsed) ms")
                #expect(stored?.hasPrefix("the keyring did not answer within 0.7 s") == true, "\(stored ?? "no error")")
                #expect(storeElapsed < 10_000, "store gave up after \(storeElapsed) ms")

                // The daemon may still apply the store it received while stopped; either value is fine,
                // but the keyring must answer again.
                let after = try store.secret(account: "stopped", kind: "refresh_token")
                #expect(after == "before-stop" || after == "during-stop")
                try store.deleteSecret(account: "stopped", kind: "refresh_token")
            } catch {
                Issue.record("unexpected error: \(error)")
            }
        }
    }

    /// The session bus dies under a connected process: calls report it, and the process lives on
    /// (GLib's default for the shared session connection is to raise SIGTERM in the process).
    @Test(.enabled(if: KeyringTestEnvironment.shouldRun, "needs gnome-keyring: run under scripts/with-keyring"))
    func sessionBusGoesAway() async throws {
        try KeyringTestEnvironment.check()
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let address = keyring.busAddress
        await #expect(processExitsWith: .success) { [address = address as String] in
            setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
            do {
                let bus = try LoginCollection.processID(of: "org.freedesktop.DBus", busAddress: address)
                let store = SecretServiceStore()
                #expect(try store.secret(account: "bus-goes-away", kind: "refresh_token") == nil)
                kill(bus, SIGKILL)
                usleep(300_000)  // GLib notices the closed connection meanwhile
                let message = storageMessage { _ = try store.secret(account: "bus-goes-away", kind: "refresh_token") }
                #expect(
                    message?.hasPrefix("no D-Bus session bus to reach the Secret Service keyring (the connection to the session bus was closed)")
                        == true,
                    "\(message ?? "no error")")
                #expect(SecretServiceStore.probe() != .available)
            } catch {
                Issue.record("unexpected error: \(error)")
            }
        }
    }

    @Test func messagesAndLabels() {
        #expect(SecretServiceStore().label(account: "acct", kind: "refresh_token") == "sfauth refresh token for acct")
        let acme = SecretServiceStore(app: AppIdentity(name: "acme", displayName: "Acme CLI"))
        #expect(acme.label(account: "acct", kind: "refresh_token") == "Acme CLI refresh token for acct")
        #expect(acme.schema == "io.sfauth.app.acme.Credentials")
        #expect(SecretServiceStore(app: .sfauth).schema == SecretServiceStore.schemaName)
        #expect(SecretServiceFailure.seconds(3000) == "3 s")
        #expect(SecretServiceFailure.seconds(500) == "0.5 s")
        #expect(SecretServiceFailure.seconds(250) == "250 ms")
        #expect(SecretServiceCall.milliseconds(.seconds(3)) == 3000)
        #expect(SecretServiceCall.milliseconds(.milliseconds(1500)) == 1500)
        #expect(SecretServiceCall.milliseconds(.zero) == 1)
        #expect(SecretServiceCall.milliseconds(.seconds(Int64.max)) == Int32.max)
    }
}
