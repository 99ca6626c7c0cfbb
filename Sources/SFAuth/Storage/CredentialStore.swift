import SFAuthCore

/// Keeps credentials between runs, keyed by account identifier, and remembers the default account.
///
/// Implementations must leave stored credentials untouched when an operation fails, and report a
/// store they cannot read as `OAuthError.storage` — never as "nothing stored".
public protocol CredentialStore: Sendable {
    /// The credentials stored for `identifier`, or `nil` when there are none.
    func load(identifier: String) throws(OAuthError) -> OAuthCredentials?
    /// Stores `credentials` under their identifier, replacing what was there; the first account
    /// stored becomes the default.
    /// - Returns: the credentials as kept: `refreshTokenInSecretStore` says where the refresh
    ///   token went (the token itself stays in the returned value).
    @discardableResult
    func save(_ credentials: OAuthCredentials) throws(OAuthError) -> OAuthCredentials
    /// Forgets the credentials for `identifier`; no error when there were none. When it was the
    /// default, the first remaining account (in identifier order) becomes the default.
    func delete(identifier: String) throws(OAuthError)
    /// The identifiers of all stored accounts, sorted.
    func identifiers() throws(OAuthError) -> [String]
    /// The identifiers of the accounts `name` selects, sorted, by `AccountNames`' rule: an exact
    /// identifier, else every account whose alias, username or email is `name`. One is an answer;
    /// none or several are for the caller to explain (`AccountResolver`). The default reads every
    /// account; `FileCredentialStore` answers from its name index.
    func identifiers(selectedBy name: String) throws(OAuthError) -> [String]
    /// The default account's identifier, if one is set.
    func defaultIdentifier() throws(OAuthError) -> String?
    /// Makes `identifier` the default account.
    func setDefault(_ identifier: String) throws(OAuthError)
    /// Takes the account's refresh lock, which serializes refreshes across threads and processes.
    func lock(account identifier: String) async throws(OAuthError) -> AccountLock
    /// The refresh token of `credentials`, wherever the store keeps it (the record or the keyring).
    func refreshToken(of credentials: OAuthCredentials) throws(OAuthError) -> String?
    /// The client secret `credentials` renew with, wherever the store keeps it (beside the refresh
    /// token); `nil` when the account keeps none. The default: the record's.
    func clientSecret(of credentials: OAuthCredentials) throws(OAuthError) -> String?
}

extension CredentialStore {
    public func clientSecret(of credentials: OAuthCredentials) throws(OAuthError) -> String? {
        credentials.clientSecret
    }

    /// Stores `credentials` only over an account that is still stored: a refresh that finishes after
    /// the account was logged out must not bring it back (with a live refresh token nobody revokes).
    /// Call it holding the account's lock (`lock(account:)`), which `logout` takes too.
    ///
    /// - Throws: `OAuthError.loginRequired` when the account is no longer stored.
    @discardableResult
    public func update(_ credentials: OAuthCredentials) throws(OAuthError) -> OAuthCredentials {
        guard try load(identifier: credentials.identifier) != nil else {
            throw .loginRequired(
                Problem(
                    "\(credentials.displayLabel) was signed out while its token was being renewed; nothing was kept.",
                    remedy: .signIn(account: nil, grant: nil)))
        }
        return try save(credentials)
    }

    /// The identifiers `name` selects, from every stored account's record (a damaged one matches by
    /// its identifier only).
    public func identifiers(selectedBy name: String) throws(OAuthError) -> [String] {
        let accounts = try identifiers().map { ($0, try? load(identifier: $0)) }
        return AccountNames.identifiers(matching: name, in: accounts)
    }

    /// The default account's credentials, or `nil` when nothing is stored.
    public func loadDefault() throws(OAuthError) -> OAuthCredentials? {
        guard let identifier = try defaultIdentifier() else { return nil }
        return try load(identifier: identifier)
    }
}
