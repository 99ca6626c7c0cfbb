import SFAuthCore

/// Keeps secrets (refresh tokens) somewhere safer than the credentials files, e.g. the desktop
/// keyring. The non-secret account data and the short-lived access token stay in the files, so
/// `sfauth token` never pays for a keyring round trip while its token is valid.
public protocol SecretStore: Sendable {
    /// Where the secrets go, for messages: e.g. "the Secret Service keyring (gnome-keyring)".
    var displayName: String { get }
    /// The secret of `kind` (e.g. `refresh_token`) for an account, or `nil` when none is stored.
    /// - Throws: `OAuthError.storage` when the store cannot answer (no D-Bus, locked, timed out) —
    ///   never `nil` for "could not look".
    func secret(account: String, kind: String) throws(OAuthError) -> String?
    /// Stores (or replaces) a secret.
    func setSecret(_ value: String, account: String, kind: String) throws(OAuthError)
    /// Deletes a secret; no error when there was none.
    func deleteSecret(account: String, kind: String) throws(OAuthError)
    /// Which item holds a secret, for a person who must remove it by hand: e.g. the command that
    /// would. Default: `displayName`.
    func itemDescription(account: String, kind: String) -> String
}

extension SecretStore {
    public func itemDescription(account: String, kind: String) -> String { displayName }
}
