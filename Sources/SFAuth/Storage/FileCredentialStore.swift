import FoundationEssentials
import Glibc
import SFAuthCore

/// Credentials as JSON files in a private directory, in the format `CredentialFile` defines.
///
/// Reading the default account is two small file reads and no lock, which keeps `sfauth token` fast.
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

    /// Uses `directory`, which is created (0700) on the first write.
    ///
    /// - Parameters:
    ///   - directory: the store's directory, an absolute path.
    ///   - secretStore: where refresh tokens of accounts that use it are kept (the keyring).
    ///   - placesNewRefreshTokensInSecretStore: whether a new sign-in's refresh token goes there.
    ///     Default: `true` when a secret store is given.
    ///   - clock: what the wait for an account's lock is measured on. Default: `SystemClock()`.
    public init(directory: String, secretStore: (any SecretStore)? = nil, placesNewRefreshTokensInSecretStore: Bool? = nil,
                clock: any AuthClock = SystemClock()) {
        self.directory = directory
        self.secretStore = secretStore
        self.placesNewRefreshTokensInSecretStore = placesNewRefreshTokensInSecretStore ?? (secretStore != nil)
        self.clock = clock
    }

    /// The store of `app`'s accounts: `$XDG_DATA_HOME/<app>` (else `~/.local/share/<app>`), with
    /// refresh tokens in the keyring under `app`'s own schema when `keyring` is `true`.
    ///
    /// - Throws: `.configuration` when neither `XDG_DATA_HOME` nor `HOME` is an absolute path.
    public init(app: AppIdentity, environment: [String: String], keyring: Bool = true,
                clock: any AuthClock = SystemClock()) throws(OAuthError) {
        self.init(directory: try StoreLocation.credentialsDirectory(app: app, environment: environment),
                  secretStore: keyring ? SecretServiceStore(app: app) : nil, clock: clock)
    }

    var accountsDirectory: String { directory + "/" + CredentialFile.accountsDirectory }
    var defaultFile: String { directory + "/" + CredentialFile.defaultFile }
    var lockFile: String { directory + "/.lock" }

    /// The lock file held while an account's tokens are refreshed.
    public func lockPath(for identifier: String) throws(OAuthError) -> String {
        try requirePrivateDirectory()
        let locks = directory + "/locks"
        do { try POSIXFile.makePrivateDirectory(locks) } catch { throw .storage("\(error)") }
        return locks + "/" + FormURLEncoding.encode(identifier) + ".lock"
    }

    /// The file holding an account's credentials.
    public func path(for identifier: String) -> String {
        accountsDirectory + "/" + CredentialFile.fileName(for: identifier)
    }

    /// Refuses a directory that is not private to this user (see `POSIXFile.privateDirectoryProblem`):
    /// credentials read from a directory someone else can write are not ours to trust, and secrets
    /// written there are not safe. One `lstat`, before every operation.
    func requirePrivateDirectory() throws(OAuthError) {
        if let problem = POSIXFile.privateDirectoryProblem(directory) { throw .storage(Problem(problem, remedy: .useAnotherCredentialsDirectory)) }
    }

    /// Checks, before a sign-in starts, that its credentials can be kept: the directory is private
    /// and can be created and written, and the default-account file can be read. Nobody should sign
    /// in at the browser only to learn afterwards that nothing could be stored.
    public func requireWritable() throws(OAuthError) {
        try requirePrivateDirectory()
        do {
            try POSIXFile.makePrivateDirectory(accountsDirectory)
            _ = try readDefault()
        } catch {
            throw .storage("\(error)")
        }
        guard access(accountsDirectory, W_OK) == 0 else {
            throw .storage("\(accountsDirectory) cannot be written (\(String(cString: strerror(errno)))); nothing could be stored")
        }
    }

    /// Reads the account's file; `nil` when there is none.
    ///
    /// - Throws: `OAuthError.storage` when the directory is not private or the file cannot be read or decoded.
    public func load(identifier: String) throws(OAuthError) -> OAuthCredentials? {
        try requirePrivateDirectory()
        let path = path(for: identifier)
        let bytes: [UInt8]?
        do { bytes = try POSIXFile.read(path) } catch { throw .storage("\(error)") }
        guard let bytes else { return nil }
        return try Self.decode(bytes, path: path, identifier: identifier)
    }

    /// Writes the account's file atomically under the store's lock, the refresh token first to the
    /// secret store when the account keeps it there; the first account saved becomes the default.
    @discardableResult
    public func save(_ kept: OAuthCredentials) throws(OAuthError) -> OAuthCredentials {
        try requirePrivateDirectory()
        var kept = kept
        var credentials = kept
        let inSecretStore = kept.refreshTokenInSecretStore ?? placesNewRefreshTokensInSecretStore
        if inSecretStore, let refreshToken = kept.refreshToken {
            guard let secretStore else {
                throw .storage(Problem("the refresh token of \(kept.displayLabel) belongs in the keyring, but the keyring is not in use (file storage was chosen)",
                                       remedy: .allowKeyringStorage))
            }
            try secretStore.setSecret(refreshToken, account: kept.identifier, kind: Self.refreshTokenKind)
            kept.refreshTokenInSecretStore = true
            credentials = kept
            credentials.refreshToken = nil
        } else if kept.refreshToken != nil {
            // Placed in the file for good: later saves through a keyring-preferring store keep it here.
            kept.refreshTokenInSecretStore = false
            credentials = kept
        }
        try locked { () throws(POSIXFile.Failure) in
            try POSIXFile.makePrivateDirectory(accountsDirectory)
            try POSIXFile.writeAtomically(CredentialFile.encode(credentials), to: path(for: credentials.identifier), directory: accountsDirectory)
            POSIXFile.removeOrphanedTemporaryFiles(in: accountsDirectory)
            if try readDefault() == nil {
                try POSIXFile.writeAtomically(CredentialFile.defaultFileContents(naming: credentials.identifier), to: defaultFile,
                                              directory: directory)
            }
        }
        return kept
    }

    /// Deletes the account's refresh token from the secret store (when it is there), then its file;
    /// the default moves to the first remaining account.
    public func delete(identifier: String) throws(OAuthError) {
        if let credentials = try load(identifier: identifier), credentials.refreshTokenPlace == .secretStore {
            // Deleting only the file would leave a live refresh token in the keyring, unreachable.
            guard let secretStore else { throw Self.keyringNotInUse(credentials) }
            try secretStore.deleteSecret(account: identifier, kind: Self.refreshTokenKind)
        }
        try removeFile(of: identifier)
    }

    /// Removes an account's file without reading it — for a file that cannot be read (damaged),
    /// which `delete` would refuse — and moves the default as `delete` does. A refresh token such
    /// an account kept in the keyring cannot be found any more without its record.
    public func removeFile(of identifier: String) throws(OAuthError) {
        try locked { () throws(POSIXFile.Failure) in
            try POSIXFile.remove(path(for: identifier), directory: accountsDirectory)
            guard try readDefault() == identifier else { return }
            if let next = try listIdentifiers().first {
                try POSIXFile.writeAtomically(CredentialFile.defaultFileContents(naming: next), to: defaultFile, directory: directory)
            } else {
                try POSIXFile.remove(defaultFile, directory: directory)
            }
        }
    }

    /// The identifiers of the accounts whose files are in the directory, sorted.
    public func identifiers() throws(OAuthError) -> [String] {
        try requirePrivateDirectory()
        do { return try listIdentifiers() } catch { throw .storage("\(error)") }
    }

    /// The identifier the `default` file names, if any.
    public func defaultIdentifier() throws(OAuthError) -> String? {
        try requirePrivateDirectory()
        do { return try readDefault() } catch { throw .storage("\(error)") }
    }

    /// Makes `identifier` the default account.
    ///
    /// - Throws: `OAuthError.configuration` when no such account is stored.
    public func setDefault(_ identifier: String) throws(OAuthError) {
        guard try load(identifier: identifier) != nil else {
            throw .configuration("there is no stored account '\(TerminalText.escaped(identifier))'")
        }
        try locked { () throws(POSIXFile.Failure) in
            try POSIXFile.writeAtomically(CredentialFile.defaultFileContents(naming: identifier), to: defaultFile, directory: directory)
        }
    }

    /// Takes the account's refresh lock (`locks/<account>.lock`), waiting up to 60 seconds.
    public func lock(account identifier: String) async throws(OAuthError) -> AccountLock {
        try await AccountLock.acquire(path: try lockPath(for: identifier), clock: clock)
    }

    /// The refresh token of `credentials`: from the record, or from the secret store when it is kept there.
    ///
    /// - Throws: `OAuthError.loginRequired` when the secret store has lost it; `.storage` when the
    ///   secret store is needed but not in use or cannot answer.
    public func refreshToken(of credentials: OAuthCredentials) throws(OAuthError) -> String? {
        guard credentials.refreshTokenPlace == .secretStore else { return credentials.refreshToken }
        guard let secretStore else { throw Self.keyringNotInUse(credentials) }
        guard let token = try secretStore.secret(account: credentials.identifier, kind: Self.refreshTokenKind) else {
            throw .loginRequired(Problem("The refresh token of \(credentials.displayLabel) is missing from \(secretStore.displayName).", remedy: .signIn(credentials)))
        }
        return token
    }

    // MARK: - File format

    private static func keyringNotInUse(_ credentials: OAuthCredentials) -> OAuthError {
        .storage(Problem("the refresh token of \(credentials.displayLabel) is in the keyring, but the keyring is not in use (file storage was chosen)",
                         remedy: .allowKeyringStorage))
    }

    package static func decode(_ bytes: [UInt8], path: String, identifier: String) throws(OAuthError) -> OAuthCredentials {
        do { return try CredentialFile.decode(bytes) } catch {
            throw .storage(Problem("\(path) is not a valid credentials file (\(error.reason))", remedy: .removeDamagedAccount(identifier: identifier)))
        }
    }

    // MARK: - Helpers

    private func locked(_ body: () throws(POSIXFile.Failure) -> Void) throws(OAuthError) {
        try requirePrivateDirectory()
        do {
            try POSIXFile.makePrivateDirectory(directory)
            try POSIXFile.withExclusiveLock(lockFile, body).get()
        } catch {
            throw .storage("\(error)")
        }
    }

    private func readDefault() throws(POSIXFile.Failure) -> String? {
        try POSIXFile.read(defaultFile).flatMap(CredentialFile.defaultIdentifier(in:))
    }

    private func listIdentifiers() throws(POSIXFile.Failure) -> [String] {
        guard let stream = opendir(accountsDirectory) else {
            if errno == ENOENT { return [] }
            throw POSIXFile.Failure(operation: "cannot list", path: accountsDirectory, code: errno)
        }
        defer { closedir(stream) }
        var identifiers = [String]()
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard let identifier = CredentialFile.identifier(fromFileName: name) else { continue }
            identifiers.append(identifier)
        }
        return identifiers.sorted()
    }
}
