/// Which client secret an account was signed in with — without the secret: a random salt and the
/// HMAC-SHA256 of the secret under it. A secret given later (`SFAUTH_CLIENT_SECRET`) is sent to the
/// account's token endpoint only when it is the same one, so a secret meant for one client never
/// reaches another account's server (SFAuthCore's `ClientSecretBinding.matches(_:)`).
public struct ClientSecretBinding: Sendable, Equatable, Codable {
    /// 16 random bytes, base64url.
    public var salt: String
    /// HMAC-SHA256(key: salt, message: secret), base64url.
    public var digest: String

    /// A binding made of its parts.
    public init(salt: String, digest: String) {
        self.salt = salt
        self.digest = digest
    }
}
