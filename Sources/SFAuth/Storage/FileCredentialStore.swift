import Dispatch
import FoundationEssentials
import Glibc
import SFAuthCore
import SFAuthStore

/// Credentials as JSON files in a private directory, in the format `CredentialFile` defines.
///
/// Every operation opens the directory once, checks that descriptor (a directory of this user
/// nobody else can write: `DirectoryTrust`) and reaches every file through it (`SFAuthStore`), so a
/// directory swapped under the same path meanwhile is never read or written. Reading the default
/// account is two small file reads and no lock; selecting an account by name reads one small file
/// of the store's name index and the account it names.
///
/// With a `SecretStore` (the keyring), refresh tokens are kept there instead of in the files: `save`
/// writes the refresh token to the secret store first, then the record without it (marked
/// `refreshTokenInSecretStore`), so a crash in between leaves the newest refresh token stored. The
/// secret store is only asked when a refresh token is needed, never to read a valid access token.
public struct FileCredentialStore: CredentialStore {
    /// The directory, e.g. `~/.local/share/sfauth`.
    public let directory: String
    /// Where refresh tokens are kept for accounts that use it; `nil` keeps them in the 0600 files.
    public let secretStore: (any SecretStore)?
    /// Whether credentials that have no place yet (a new sign-in) put their refresh token in the
    /// secret store. An account keeps its place on later saves (a refresh), whatever this says.
    public let placesNewRefreshTokensInSecretStore: Bool
    /// What `lock(account:)` measures its wait for another holder on (up to 60 s, in short pauses).
    /// Default: `SystemClock()`.
    public let clock: any AuthClock

    /// The `kind` under which refresh tokens are kept in the secret store.
    static let refreshTokenKind = "refresh_token"
    /// The `kind` under which the client secret of an account that keeps its refresh token in the
    /// secret store is kept there too.
    static let clientSecretKind = "client_secret"

    /// Uses `directory`, which is created (0700) on the first write.
    ///
    /// - Parameters:
    ///   - directory: the store's directory, an absolute path.
    ///   - secretStore: where refresh tokens of accounts that use it are kept (the keyring).
    ///   - placesNewRefreshTokensInSecretStore: whether a new sign-in's refresh token goes there.
    ///     Default: `true` when a secret store is given.
    ///   - clock: what the wait for an account's lock is measured on. Default: `SystemClock()`.
    public init(
        directory: String, secretStore: (any SecretStore)? = nil, placesNewRefreshTokensInSecretStore: Bool? = nil,
        clock: any AuthClock = SystemClock()
    ) {
        self.directory = directory
        self.secretStore = secretStore
        self.placesNewRefreshTokensInSecretStore = placesNewRefreshTokensInSecretStore ?? (secretStore != nil)
        self.clock = clock
    }

    /// The store of `app`'s accounts: `$XDG_DATA_HOME/<app>` (else `~/.local/share/<app>`), with
    /// refresh tokens in the keyring under `app`'s own schema when `keyring` is `true`.
    ///
    /// - Throws: `.configuration` when neither `XDG_DATA_HOME` nor `HOME` is an absolute path.
    public init(
        app: AppIdentity, environment: [String: String], keyring: Bool = true,
        clock: any AuthClock = SystemClock()
    ) throws(OAuthError) {
        self.init(
            directory: try StoreLocation.credentialsDirectory(app: app, environment: environment),
            secretStore: keyring ? SecretServiceStore(app: app) : nil, clock: clock)
    }

    /// The file the store's writers hold (`flock`) while they change it.
    static let storeLockFile = ".lock"
    /// The subdirectory of the accounts' refresh locks.
    static let locksDirectory = "locks"

    /// The lock file held while an account's tokens are refreshed.
    public func lockPath(for identifier: String) throws(OAuthError) -> String {
        let store = try openStore()
        do { _ = try store.privateSubdirectory(Self.locksDirectory) } catch { throw .storage("\(error)") }
        return store.child(Self.locksDirectory) + "/" + Self.lockFileName(for: identifier)
    }

    /// The file holding an account's credentials.
    public func path(for identifier: String) -> String {
        directory + "/" + CredentialFile.accountsDirectory + "/" + CredentialFile.fileName(for: identifier)
    }

    /// Checks, before a sign-in starts, that its credentials can be kept: the directory is private
    /// and can be created and written, and the default-account file can be read. Nobody should sign
    /// in at the browser only to learn afterwards that nothing could be stored.
    public func requireWritable() throws(OAuthError) {
        let store = try openStore()
        let accounts: Directory
        do {
            accounts = try store.privateSubdirectory(CredentialFile.accountsDirectory)
            _ = try AccountFiles(store: store).defaultIdentifier()
        } catch {
            throw .storage("\(error)")
        }
        guard faccessat(accounts.descriptor, ".", W_OK, 0) == 0 else {
            throw .storage("\(accounts.path) cannot be written (\(String(cString: strerror(errno)))); nothing could be stored")
        }
    }

    /// Reads the account's file; `nil` when there is none.
    ///
    /// - Throws: `OAuthError.storage` when the directory is not private or the file cannot be read or decoded.
    public func load(identifier: String) throws(OAuthError) -> OAuthCredentials? {
        guard let files = try openAccounts() else { return nil }
        return try read(identifier, in: files)
    }

    /// Writes the account's file atomically under the store's lock, the refresh token first to the
    /// secret store when the account keeps it there; the first account saved becomes the default.
    @discardableResult
    public func save(_ kept: OAuthCredentials) throws(OAuthError) -> OAuthCredentials {
        // Opened (and trusted) before anything is written, the keyring included.
        let store = try openStore()
        var kept = kept
        var credentials = kept
        let inSecretStore = kept.refreshTokenInSecretStore ?? placesNewRefreshTokensInSecretStore
        if inSecretStore, let refreshToken = kept.refreshToken {
            guard let secretStore else {
                throw .storage(
                    Problem(
                        "the refresh token of \(kept.displayLabel) belongs in the keyring, but the keyring is not in use (file storage was chosen)",
                        remedy: .allowKeyringStorage))
            }
            try secretStore.setSecret(refreshToken, account: kept.identifier, kind: Self.refreshTokenKind)
            if let clientSecret = kept.clientSecret {
                try secretStore.setSecret(clientSecret, account: kept.identifier, kind: Self.clientSecretKind)
            }
            kept.refreshTokenInSecretStore = true
            credentials = kept
            credentials.refreshToken = nil
            credentials.clientSecret = nil
        } else if kept.refreshToken != nil {
            // Placed in the file for good: later saves through a keyring-preferring store keep it here.
            kept.refreshTokenInSecretStore = false
            credentials = kept
        }
        try locked(store) { () throws(FileFailure) in
            let files = try AccountFiles(store: store, creatingAccounts: true)
            try files.write(credentials)
            if try files.defaultIdentifier() == nil {
                try store.writeAtomically(CredentialFile.defaultFileContents(naming: credentials.identifier), to: CredentialFile.defaultFile)
            }
        }
        return kept
    }

    /// Deletes the account's refresh token from the secret store (when it is there), then its file;
    /// the default moves to the first remaining account.
    public func delete(identifier: String) throws(OAuthError) {
        guard let files = try openAccounts() else { return }
        if let credentials = try read(identifier, in: files), credentials.refreshTokenPlace == .secretStore {
            // Deleting only the file would leave a live refresh token in the keyring, unreachable.
            guard let secretStore else { throw Self.keyringNotInUse(credentials) }
            try secretStore.deleteSecret(account: identifier, kind: Self.refreshTokenKind)
            if credentials.clientSecretBinding != nil {
                try secretStore.deleteSecret(account: identifier, kind: Self.clientSecretKind)
            }
        }
        try removeFile(of: identifier, in: files.store)
    }

    /// Removes an account's file without reading it — for a file that cannot be read (damaged),
    /// which `delete` would refuse — and moves the default as `delete` does. A refresh token such
    /// an account kept in the keyring cannot be found any more without its record.
    public func removeFile(of identifier: String) throws(OAuthError) {
        guard let files = try openAccounts() else { return }
        try removeFile(of: identifier, in: files.store)
    }

    /// The identifiers of the accounts whose files are in the directory, sorted.
    public func identifiers() throws(OAuthError) -> [String] {
        guard let files = try openAccounts() else { return [] }
        do { return try files.identifiers() } catch { throw .storage("\(error)") }
    }

    /// The identifiers `name` selects (`AccountNames`), read through the store's name index: an
    /// exact identifier, else the accounts the index lists for the name, each checked against its
    /// record — without reading every account's file. A missing or stale index is rebuilt first
    /// (when the store can be written); failing that, every record is read.
    public func identifiers(selectedBy name: String) throws(OAuthError) -> [String] {
        guard let files = try openAccounts() else { return [] }
        var selection = files.select(name)
        if selection == .unknown {
            // Best effort: a store that cannot be written still answers, by reading every record.
            try? locked(files.store) { () throws(FileFailure) in try files.rebuildNameIndex() }
            selection = files.select(name)
        }
        switch selection {
        case .one(let identifier, _): return [identifier]
        case .none: return []
        case .several(let identifiers): return identifiers
        case .unknown:
            do { return AccountNames.identifiers(matching: name, in: try files.records()) } catch { throw .storage("\(error)") }
        }
    }

    /// Every stored account, in identifier order, read through one opening of the store and
    /// handed to `describe` with its credentials, or the error `load(identifier:)` would throw for
    /// its file; an account whose file was removed since the listing is left out. The files are
    /// read, decoded and described on all processors at once (`sfauth accounts`, with hundreds of
    /// accounts).
    package func allAccounts<Description: Sendable>(
        _ describe: @Sendable (_ identifier: String, _ credentials: Result<OAuthCredentials, OAuthError>) -> Description
    ) throws(OAuthError) -> [Description] {
        guard let files = try openAccounts() else { return [] }
        let identifiers: [String]
        do { identifiers = try files.identifiers() } catch { throw .storage("\(error)") }
        var described = [Description?](repeating: nil, count: identifiers.count)
        described.withUnsafeMutableBufferPointer { results in
            // Each iteration writes its own element, and only that one.
            nonisolated(unsafe) let results = results
            DispatchQueue.concurrentPerform(iterations: identifiers.count) { index in
                let identifier = identifiers[index]
                do throws(OAuthError) {
                    guard let credentials = try read(identifier, in: files) else { return }
                    results[index] = describe(identifier, .success(credentials))
                } catch {
                    results[index] = describe(identifier, .failure(error))
                }
            }
        }
        return described.compactMap { $0 }
    }

    /// The identifier the `default` file names, if any.
    public func defaultIdentifier() throws(OAuthError) -> String? {
        guard let files = try openAccounts() else { return nil }
        do { return try files.defaultIdentifier() } catch { throw .storage("\(error)") }
    }

    /// Makes `identifier` the default account.
    ///
    /// - Throws: `OAuthError.configuration` when no such account is stored.
    public func setDefault(_ identifier: String) throws(OAuthError) {
        guard let files = try openAccounts(), try read(identifier, in: files) != nil else {
            throw .configuration("there is no stored account '\(TerminalText.escaped(identifier))'")
        }
        try locked(files.store) { () throws(FileFailure) in
            try files.store.writeAtomically(CredentialFile.defaultFileContents(naming: identifier), to: CredentialFile.defaultFile)
        }
    }

    /// Takes the account's refresh lock (`locks/<account>.lock`), waiting up to 60 seconds.
    public func lock(account identifier: String) async throws(OAuthError) -> AccountLock {
        try await lock(account: identifier, timeout: .seconds(60))
    }

    /// Takes the lock `locks/<identifier>.lock` — an account's, or another name's in the same room
    /// (`sign-in:<account>`) — waiting up to `timeout`; `AccountLock.waited` says whether another
    /// process held it.
    package func lock(account identifier: String, timeout: Duration) async throws(OAuthError) -> AccountLock {
        let store = try openStore()
        let name = Self.lockFileName(for: identifier)
        let path = store.child(Self.locksDirectory) + "/" + name
        let descriptor: Int32
        do {
            descriptor = try store.privateSubdirectory(Self.locksDirectory).openLockFile(name)
        } catch {
            throw .storage("cannot open the lock file \(path): \(String(cString: strerror(error.code)))")
        }
        return try await AccountLock.acquire(descriptor: descriptor, path: path, timeout: timeout, clock: clock)
    }

    /// The refresh token of `credentials`: from the record, or from the secret store when it is kept there.
    ///
    /// - Throws: `OAuthError.loginRequired` when the secret store has lost it; `.storage` when the
    ///   secret store is needed but not in use or cannot answer.
    public func refreshToken(of credentials: OAuthCredentials) throws(OAuthError) -> String? {
        guard credentials.refreshTokenPlace == .secretStore else { return credentials.refreshToken }
        guard let secretStore else { throw Self.keyringNotInUse(credentials) }
        guard let token = try secretStore.secret(account: credentials.identifier, kind: Self.refreshTokenKind) else {
            throw .loginRequired(
                Problem("The refresh token of \(credentials.displayLabel) is missing from \(secretStore.displayName).", remedy: .signIn(credentials)))
        }
        return token
    }

    /// The client secret of `credentials`: from the record, or from the secret store beside a refresh
    /// token kept there (looked up only for an account that signed in with a secret).
    public func clientSecret(of credentials: OAuthCredentials) throws(OAuthError) -> String? {
        if let kept = credentials.clientSecret { return kept }
        guard credentials.refreshTokenPlace == .secretStore, credentials.clientSecretBinding != nil, let secretStore else { return nil }
        return try secretStore.secret(account: credentials.identifier, kind: Self.clientSecretKind)
    }

    // MARK: - File format

    private static func keyringNotInUse(_ credentials: OAuthCredentials) -> OAuthError {
        .storage(
            Problem(
                "the refresh token of \(credentials.displayLabel) is in the keyring, but the keyring is not in use (file storage was chosen)",
                remedy: .allowKeyringStorage))
    }

    package static func decode(_ bytes: [UInt8], path: @autoclosure () -> String, identifier: String) throws(OAuthError) -> OAuthCredentials {
        do { return try CredentialFile.decode(bytes) } catch {
            throw .storage(
                Problem("\(path()) is not a valid credentials file (\(error.reason))", remedy: .removeDamagedAccount(identifier: identifier)))
        }
    }

    // MARK: - Helpers

    /// The store directory, opened and trusted for one operation — created first when missing.
    private func openStore() throws(OAuthError) -> Directory {
        do { return try StoreDirectory.openCreating(directory) } catch { throw Self.storageError(error) }
    }

    /// The accounts of the store, opened and trusted for one operation; `nil` when the store does
    /// not exist (nothing is stored).
    private func openAccounts() throws(OAuthError) -> AccountFiles? {
        let store: Directory?
        do { store = try StoreDirectory.open(directory) } catch { throw Self.storageError(error) }
        guard let store else { return nil }
        do { return try AccountFiles(store: store) } catch { throw .storage("\(error)") }
    }

    /// The account's credentials read through `files`; `nil` when it has no file.
    private func read(_ identifier: String, in files: AccountFiles) throws(OAuthError) -> OAuthCredentials? {
        let bytes: [UInt8]?
        do { bytes = try files.record(of: identifier) } catch { throw .storage("\(error)") }
        guard let bytes else { return nil }
        return try Self.decode(bytes, path: path(for: identifier), identifier: identifier)
    }

    /// Removes the file under the store's lock, and moves the default when it named the account.
    private func removeFile(of identifier: String, in store: Directory) throws(OAuthError) {
        try locked(store) { () throws(FileFailure) in
            let files = try AccountFiles(store: store)
            try files.remove(identifier)
            guard try files.defaultIdentifier() == identifier else { return }
            if let next = try files.identifiers().first {
                try store.writeAtomically(CredentialFile.defaultFileContents(naming: next), to: CredentialFile.defaultFile)
            } else {
                try store.remove(CredentialFile.defaultFile)
            }
        }
    }

    /// Runs `body` holding the store's lock (`.lock`, through `store`), the directory tightened to 0700.
    private func locked(_ store: Directory, _ body: () throws(FileFailure) -> Void) throws(OAuthError) {
        do {
            try store.tighten()
            try store.withExclusiveLock(Self.storeLockFile, body).get()
        } catch {
            throw .storage("\(error)")
        }
    }

    private static func lockFileName(for identifier: String) -> String {
        FormURLEncoding.encode(identifier) + ".lock"
    }

    /// A directory that is not private is refused with the way out: another directory.
    private static func storageError(_ failure: StoreFailure) -> OAuthError {
        switch failure {
        case .untrusted: return .storage(Problem("\(failure)", remedy: .useAnotherCredentialsDirectory))
        case .file, .anotherUsersDirectory: return .storage("\(failure)")
        }
    }
}
