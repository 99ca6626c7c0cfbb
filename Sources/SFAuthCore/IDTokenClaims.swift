/// The claims of an OpenID Connect ID token (OIDC Core §2), read WITHOUT verifying the signature.
///
/// Used only to name the account (`sub`, `preferred_username`, `email`); nothing here is trusted for
/// authorization decisions.
public struct IDTokenClaims: Sendable, Equatable {
    /// `sub`: the user's identifier at the issuer.
    public var subject: String
    /// `iss`.
    public var issuer: String?
    /// `preferred_username`.
    public var preferredUsername: String?
    /// `email`.
    public var email: String?
    /// `name`.
    public var name: String?
    /// `nonce`.
    public var nonce: String?

    /// Decodes the payload (second part) of a compact JWS; `nil` when it is not one or has no `sub`.
    public init?(unverifiedToken token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]), let json = JSONValue.parse(payload),
              let subject = json["sub"]?.stringValue, !subject.isEmpty else { return nil }
        self.subject = subject
        issuer = json["iss"]?.stringValue
        preferredUsername = json["preferred_username"]?.stringValue
        email = json["email"]?.stringValue
        name = json["name"]?.stringValue
        nonce = json["nonce"]?.stringValue
    }
}
