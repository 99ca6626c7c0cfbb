/// What a JWT bearer account needs to get a new access token without a person, the way the `sf`
/// CLI renews a JWT login: the grant issues no refresh token (RFC 7523 §3.1 has no need for one),
/// so a new assertion is signed with the same key. Stored with the account; the key itself is not
/// copied, only its path.
public struct JWTBearerRenewal: Sendable, Equatable, Codable {
    /// The absolute path of the PEM private key that signed the sign-in's assertion.
    public var keyFile: String
    /// The `kid` put in the assertion's header, when one was given.
    public var keyID: String?
    /// The assertion's `sub`: the username signed in as.
    public var subject: String
    /// The assertion's `aud`.
    public var audience: String

    /// Creates a renewal record.
    public init(keyFile: String, keyID: String? = nil, subject: String, audience: String) {
        self.keyFile = keyFile
        self.keyID = keyID
        self.subject = subject
        self.audience = audience
    }
}
