/// The rules for the accounts in a store, in one place — what a sign-in keeps and replaces, which
/// account is the default, where an alias lives, what is revoked, and what signing out forgets.
/// The coordinator keeps every sign-in through it; `sfauth logout` forgets through it.
///
/// Every change to an account happens under that account's refresh lock, so a `sfauth token`
/// refreshing it at the same moment finishes first and never writes replaced or forgotten tokens back.
public struct AccountBook: Sendable {
    /// The store the accounts are in.
    public let store: any CredentialStore

    /// The accounts in `store`.
    public init(store: any CredentialStore) {
        self.store = store
    }

    // MARK: - Signing in

    /// What `keep` did.
    public struct Kept: Sendable {
        /// The credentials as stored (their identifier and alias final).
        public var credentials: OAuthCredentials
        /// The record of the same account the sign-in replaced (with its refresh token, read from
        /// wherever it was kept, for `revokeReplaced`); `nil` for a new account.
        public var replaced: OAuthCredentials?
    }

    /// Stores newly signed-in credentials. The same account signing in again replaces its record
    /// (keeping its alias unless `alias` is given, and only when the sign-in names the same issuer
    /// as before); a sign-in whose user the server never named becomes an account of its own
    /// (`host/unidentified-N`), so one person's sign-in can neither replace nor revoke another's —
    /// unless it is `replacing` such an account of the same server, which the person chose by
    /// name; `alias` moves from any other account that had it; with `makeDefault` the account
    /// becomes the default.
    ///
    /// - Parameters:
    ///   - credentials: the credentials a sign-in obtained.
    ///   - alias: the name to give the account; `nil` keeps the one it has.
    ///   - makeDefault: whether the account becomes the default.
    ///   - replacing: an unidentified account this sign-in is meant to sign in again.
    /// - Throws: what the store throws, or `.invalidServerResponse` when the sign-in names another
    ///   issuer than the account's earlier ones. Nothing is stored then.
    public func keep(_ credentials: OAuthCredentials, alias: String?, makeDefault: Bool, replacing: String? = nil) async throws(OAuthError) -> Kept {
        var credentials = credentials
        var (lock, previous) = try await lockedAccount(for: &credentials, replacing: replacing)
        defer { withExtendedLifetime(lock) {} }
        if let previous { try credentials.checkIssuer(matches: previous) }
        // For revoking the replaced refresh token later; if the keyring cannot say, it is not revoked.
        if let stored = previous { previous?.refreshToken = try? store.refreshToken(of: stored) }
        credentials.alias = alias ?? previous?.alias
        credentials = try store.save(credentials)
        // Only once the account is stored: a failed save must leave the other accounts as they were.
        if let alias { try moveAlias(alias, to: credentials.identifier) }
        if makeDefault { try store.setDefault(credentials.identifier) }
        return Kept(credentials: credentials, replaced: previous)
    }

    /// Revokes the refresh token a sign-in replaced, unless the server handed the same one out again.
    /// Best effort: a replaced token the server cannot revoke expires by itself.
    public func revokeReplaced(_ kept: Kept, with revoker: TokenRevoker) async {
        guard let replaced = kept.replaced, replaced.refreshToken != nil,
            replaced.refreshToken != kept.credentials.refreshToken
        else { return }
        // Revoked from the token `keep` read, never from the store: the keyring now holds the new
        // sign-in's refresh token under the same account.
        _ = await revoker.revoke(replaced, keptIn: nil)
    }

    /// Takes the refresh lock of the account `credentials` will be stored as, and reads what is
    /// stored there now. Credentials without a known user get the first free `unidentified-N`.
    private func lockedAccount(for credentials: inout OAuthCredentials, replacing: String?) async throws(OAuthError) -> (
        AccountLock, OAuthCredentials?
    ) {
        guard !credentials.isIdentified else {
            let lock = try await store.lock(account: credentials.identifier)
            return (lock, try store.load(identifier: credentials.identifier))
        }
        if let replacing {
            let lock = try await store.lock(account: replacing)
            if let previous = try store.load(identifier: replacing), !previous.isIdentified,
                previous.server.tokenEndpoint == credentials.server.tokenEndpoint
            {
                credentials.identifier = replacing
                return (lock, previous)
            }
        }
        let taken = Set(try store.identifiers())
        var number = 1
        while true {
            let identifier = AccountIdentifier.unidentified(server: credentials.server, number: number)
            number += 1
            guard !taken.contains(identifier) else { continue }
            let lock = try await store.lock(account: identifier)
            // Another sign-in may have taken the number while we waited for its lock.
            guard try store.load(identifier: identifier) == nil else { continue }
            credentials.identifier = identifier
            return (lock, nil)
        }
    }

    /// Takes `alias` from every other account.
    private func moveAlias(_ alias: String, to identifier: String) throws(OAuthError) {
        for other in try store.identifiers() where other != identifier {
            if var credentials = try store.load(identifier: other), credentials.alias == alias {
                credentials.alias = nil
                try store.save(credentials)
            }
        }
    }

    // MARK: - Signing out

    /// What `forget` did.
    public enum Farewell: Sendable {
        /// Nothing is stored under that identifier (any more).
        case notStored
        /// The account is gone from the store; `revocation` says what the server did with its
        /// tokens (`nil`: it was not asked).
        case forgotten(OAuthCredentials, revocation: RevocationReport?)
        /// The server was asked to revoke the tokens (`revocation`), but the account could not be
        /// removed here (`error`); it is marked as needing a new sign-in, so no token it holds is
        /// handed out again.
        case revokedButKept(OAuthCredentials, revocation: RevocationReport, error: OAuthError)
        /// The account's file cannot be read, so it holds no token to revoke; it was kept (not
        /// `removingUnreadable`) with the reason.
        case unreadableKept(path: String, problem: OAuthError)
        /// The account's unreadable file was removed.
        case unreadableRemoved(path: String)
        /// The account is gone from the store, but its refresh token stays in the secret store,
        /// which cannot be reached now (`reason`): `item` says which item to remove there later.
        case forgottenLeavingSecret(OAuthCredentials, item: String, reason: String)
    }

    /// Signs an account out — the one way to: under the account's lock (so no refresh running
    /// meanwhile can store it again), revokes its refresh token and access token at the server with
    /// `revoker` (unless `nil`; the refresh token read from wherever the store keeps it, the keyring
    /// included), then removes the account from the store — its refresh token from the keyring too;
    /// the default moves to the first remaining account. A file that cannot be read is removed only
    /// when `removingUnreadable`.
    ///
    /// ```swift
    /// let book = AccountBook(store: store)
    /// if case .forgotten(_, let revocation?) = try await book.forget(identifier, revokingWith: TokenRevoker(),
    ///                                                                removingUnreadable: false) {
    ///     print(revocation.summary)   // "revoked the refresh token and the access token at idp.example"
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: the account's identifier (``AccountResolver`` finds it from an alias or a username).
    ///   - revoker: revokes the tokens first; `nil` only forgets them here.
    ///   - removingUnreadable: whether an account file that cannot be read (damaged) is removed.
    /// - Throws: when the keyring holding its refresh token cannot be used — before anything is revoked or removed.
    public func forget(_ identifier: String, revokingWith revoker: TokenRevoker?, removingUnreadable: Bool) async throws(OAuthError) -> Farewell {
        let files = store as? FileCredentialStore
        let path = files?.path(for: identifier) ?? identifier
        let lock = try await store.lock(account: identifier)
        defer { withExtendedLifetime(lock) {} }
        let loaded: OAuthCredentials?
        do {
            loaded = try store.load(identifier: identifier)
        } catch .storage(let problem) where (try? store.identifiers())?.contains(identifier) == true {
            guard removingUnreadable else { return .unreadableKept(path: path, problem: .storage(problem)) }
            // The file store can remove a file it cannot read; any other store deletes what it has.
            if let files { try files.removeFile(of: identifier) } else { try store.delete(identifier: identifier) }
            return .unreadableRemoved(path: path)
        }
        guard var credentials = loaded else { return .notStored }
        var revocation: RevocationReport?
        if let revoker {
            // A refresh token already gone from the keyring only means there is less to revoke.
            do {
                credentials.refreshToken = try store.refreshToken(of: credentials)
            } catch .loginRequired {
                credentials.refreshToken = nil
            } catch .storage(let problem) where problem.remedy != .allowKeyringStorage {
                // The keyring is out of reach (SSH, cron): end what this machine holds — the access
                // token — and keep the account, whose refresh token only the keyring can give up.
                let ended = await revoker.revoke(credentials, keptIn: store)
                var stored = credentials
                stored.status = .loginRequired
                _ = try? store.update(stored)
                return .revokedButKept(
                    credentials, revocation: ended,
                    error: .storage(
                        Problem(
                            "its refresh token is in the keyring, which cannot be reached now (\(problem.text))",
                            remedy: .forgetLocally(account: credentials.selectableName))))
            }
            revocation = await revoker.revoke(credentials, keptIn: store)
        }
        do {
            try store.delete(identifier: identifier)
        } catch .storage(let problem)
            where revocation == nil && problem.remedy != .allowKeyringStorage
            && credentials.refreshTokenPlace == .secretStore && files != nil
        {
            // Forgetting here only, with the keyring out of reach: the record goes, and the person is
            // told which keyring item is left behind.
            try files?.removeFile(of: identifier)
            let item = files?.secretStore?.itemDescription(account: identifier, kind: FileCredentialStore.refreshTokenKind) ?? "the keyring"
            return .forgottenLeavingSecret(credentials, item: item, reason: problem.text)
        } catch {
            guard let revocation else { throw error }
            // The tokens may be dead at the server already: never hand them out again.
            var stored = credentials
            stored.status = .loginRequired
            _ = try? store.update(stored)
            return .revokedButKept(credentials, revocation: revocation, error: error)
        }
        return .forgotten(credentials, revocation: revocation)
    }
}
