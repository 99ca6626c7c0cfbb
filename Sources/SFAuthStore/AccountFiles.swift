import Glibc
import SFAuthModel

/// The accounts of an opened store — their records, the default, and selection by name — read
/// the same way by both programs, through the store's descriptor.
package struct AccountFiles: Sendable {
    /// The store directory, opened and checked (`StoreDirectory`).
    package let store: Directory
    /// Its `accounts/`; `nil` while no account was ever stored.
    package let accounts: Directory?

    /// The accounts of `store`; with `creatingAccounts`, `accounts/` is created (0700) when missing,
    /// for a write.
    package init(store: Directory, creatingAccounts: Bool = false) throws(FileFailure) {
        self.store = store
        accounts =
            creatingAccounts
            ? try store.privateSubdirectory(CredentialFile.accountsDirectory)
            : try store.subdirectory(CredentialFile.accountsDirectory)
    }

    /// The bytes of the account's file (`CredentialFile`); `nil` when there is none.
    package func record(of identifier: String) throws(FileFailure) -> [UInt8]? {
        try accounts?.read(CredentialFile.fileName(for: identifier))
    }

    /// The identifier the `default` file names, if any.
    package func defaultIdentifier() throws(FileFailure) -> String? {
        try store.read(CredentialFile.defaultFile).flatMap(CredentialFile.defaultIdentifier(in:))
    }

    /// The identifiers of the accounts whose files are here, sorted.
    package func identifiers() throws(FileFailure) -> [String] {
        guard let accounts else { return [] }
        return try accounts.names().compactMap(CredentialFile.identifier(fromFileName:)).sorted()
    }

    /// Every account with its record; `nil` for a record that cannot be read or decoded.
    package func records() throws(FileFailure) -> [(identifier: String, credentials: OAuthCredentials?)] {
        try identifiers().map { identifier in
            (identifier, (try? record(of: identifier)).flatMap { try? CredentialFile.decode($0) })
        }
    }

    /// What a name selects.
    package enum Selection: Equatable {
        /// One account: its identifier, and its record when reading it was part of selecting it.
        case one(String, OAuthCredentials?)
        /// No account has the name.
        case none
        /// Several accounts have it (their identifiers, sorted).
        case several([String])
        /// The name index cannot tell — missing, stale, or contradicted by a record: the full rule
        /// (`AccountNames` over every record) decides.
        case unknown
    }

    /// What `name` selects by `AccountNames`' rule, without reading every record: an exact
    /// identifier (its file is there), else the accounts the name index lists for it, each checked
    /// against its record — the one whose alias it is first.
    package func select(_ name: String) -> Selection {
        guard let accounts else { return .none }
        let file = CredentialFile.fileName(for: name)
        if CredentialFile.identifier(fromFileName: file) == name && accounts.contains(file) { return .one(name, nil) }
        guard let listed = NameIndex(store: store).identifiers(named: name, accounts: accounts) else { return .unknown }
        var named = [(identifier: String, credentials: OAuthCredentials)]()
        for identifier in listed {
            // A record that cannot be read, or no longer has the name, says the index is out of date.
            guard let bytes = try? record(of: identifier), let credentials = try? CredentialFile.decode(bytes),
                AccountNames.names(of: credentials).contains(name)
            else { return .unknown }
            named.append((identifier, credentials))
        }
        named = AccountNames.preferringAliases(name, named)
        switch named.count {
        case 0: return .none
        case 1: return .one(named[0].identifier, named[0].credentials)
        default: return .several(named.map(\.identifier).sorted())
        }
    }

    // MARK: - Writing (holding the store's lock)

    /// Writes `credentials` to their account's file — atomically and synced (`Directory.writeAtomically`)
    /// — removes temporary files that dead writers left, and keeps the name index current.
    package func write(_ credentials: OAuthCredentials) throws(FileFailure) {
        let accounts = try requireAccounts()
        let file = CredentialFile.fileName(for: credentials.identifier)
        let before = namesBeforeChange(of: file, in: accounts)
        try accounts.writeAtomically(CredentialFile.encode(credentials), to: file)
        accounts.removeOrphanedTemporaryFiles()
        keepIndex(credentials.identifier, before: before, after: AccountNames.names(of: credentials), accounts: accounts)
    }

    /// Removes the account's file (no error when there is none), keeping the name index current.
    package func remove(_ identifier: String) throws(FileFailure) {
        guard let accounts else { return }
        let file = CredentialFile.fileName(for: identifier)
        let before = namesBeforeChange(of: file, in: accounts)
        try accounts.remove(file)
        keepIndex(identifier, before: before, after: [], accounts: accounts)
    }

    /// Writes the name index afresh from every record, unless it is current.
    package func rebuildNameIndex() throws(FileFailure) {
        guard let accounts else { return }
        let index = NameIndex(store: store)
        guard !index.isCurrent(accounts: accounts) else { return }
        try index.rebuild(accounts: accounts, records: { () throws(FileFailure) in try records() })
    }

    /// What the name index needs to know before a file of `accounts` changes: whether it is current,
    /// and then the names of the record there now (none when there is no file) — `nil` when it is not
    /// current, or the record cannot be read (its names cannot be taken out of the index).
    private func namesBeforeChange(of file: String, in accounts: Directory) -> [String]? {
        let index = NameIndex(store: store)
        if !index.isCurrent(accounts: accounts) {
            // A store without accounts gets its (empty) index at once: a new store is indexed from
            // its first account on. Any other is rebuilt when a name is looked up.
            guard (try? identifiers().isEmpty) == true, (try? index.rebuild(accounts: accounts, records: { [] })) != nil else { return nil }
        }
        guard let bytes = try? accounts.read(file) else { return accounts.contains(file) ? nil : [] }
        return (try? CredentialFile.decode(bytes)).map(AccountNames.names(of:))
    }

    /// After the change: the index updated when its state before was known, else made stale.
    private func keepIndex(_ identifier: String, before: [String]?, after: [String], accounts: Directory) {
        let index = NameIndex(store: store)
        if let before { index.update(identifier: identifier, old: before, new: after, accounts: accounts) } else { index.invalidate() }
    }

    private func requireAccounts() throws(FileFailure) -> Directory {
        guard let accounts else { throw FileFailure(operation: "cannot open", path: store.child(CredentialFile.accountsDirectory), code: ENOENT) }
        return accounts
    }
}
