import FoundationEssentials

/// The claims of an OpenID Connect ID token (OIDC Core §2), as read from its payload.
///
/// Reading them verifies nothing: `IDTokenCheck` checks them against what the sign-in expects, and
/// `IDTokenValidator` (SFAuth) checks the signature first. Until both have passed, nothing here may
/// be trusted for more than naming an account.
package struct IDTokenClaims: Sendable, Equatable {
    /// `sub`: the user's identifier at the issuer. Required, never empty.
    package var subject: String
    /// `iss`: who issued the token.
    package var issuer: String?
    /// `aud`: the clients the token is for (a single string on the wire is one audience).
    package var audiences: [String]
    /// `azp`: the client the token was issued to, when the server says.
    package var authorizedParty: String?
    /// `exp`: when the token stops being valid.
    package var expiresAt: Date?
    /// `iat`: when the token was issued.
    package var issuedAt: Date?
    /// `nonce`: the value the authorization request sent (OIDC Core §3.1.2.1).
    package var nonce: String?
    /// `preferred_username`.
    package var preferredUsername: String?
    /// `email`.
    package var email: String?
    /// `name`.
    package var name: String?
    /// `tid`: the Microsoft Entra tenant the user signed in through.
    package var tenantId: String?

    /// Reads the payload (second part) of a compact JWS.
    ///
    /// - Throws: `OAuthError.idTokenRejected` when the token is not a compact JWS with a JSON object
    ///   payload, or has no `sub`.
    package init(token: String) throws(OAuthError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]), let json = JSONValue.parse(payload),
            case .object = json
        else {
            throw .idTokenRejected("the ID token is not a signed JWT (a compact JWS of three base64url parts with a JSON payload)")
        }
        guard let subject = json["sub"]?.stringValue, !subject.isEmpty else {
            throw .idTokenRejected("the ID token has no 'sub' (subject) claim")
        }
        self.subject = subject
        issuer = json["iss"]?.stringValue
        switch json["aud"] {
        case .array(let values)?: audiences = values.compactMap(\.stringValue)
        case let value?: audiences = value.stringValue.map { [$0] } ?? []
        case nil: audiences = []
        }
        authorizedParty = json["azp"]?.stringValue
        expiresAt = json["exp"]?.numberValue.map(Date.init(timeIntervalSince1970:))
        issuedAt = json["iat"]?.numberValue.map(Date.init(timeIntervalSince1970:))
        nonce = json["nonce"]?.stringValue
        preferredUsername = json["preferred_username"]?.stringValue
        email = json["email"]?.stringValue
        name = json["name"]?.stringValue
        tenantId = json["tid"]?.stringValue
    }

    /// Reads the payload like `init(token:)`; `nil` when it is not an ID token with a `sub`.
    ///
    /// For naming an account from a token that was validated when it arrived (or whose server is
    /// trusted through TLS); never for a token just received.
    package init?(unverifiedToken token: String) {
        guard let claims = try? IDTokenClaims(token: token) else { return nil }
        self = claims
    }
}
