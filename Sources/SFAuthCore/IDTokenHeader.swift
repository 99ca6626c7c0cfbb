/// The protected header of an ID token (a JWS, RFC 7515 §4): which algorithm signed it and with
/// which key. Read before the signature is checked, to choose the key.
package struct IDTokenHeader: Sendable, Equatable {
    /// The signature algorithms an ID token may be verified with: RSA PKCS#1 v1.5 and PSS, ECDSA on
    /// P-256/384/521 and EdDSA (Ed25519) — public-key signatures only. `none` (nothing signed) and the
    /// HMAC algorithms (`HS256`…, keyed with a shared secret, and the classic way to forge a token
    /// "signed" with a server's public key) are never accepted.
    package static let signatureAlgorithms = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
    ]

    /// `alg`: the signature algorithm, e.g. `RS256`.
    package var algorithm: String
    /// `kid`: which of the server's keys signed the token, when the header names one.
    package var keyID: String?

    /// Reads the header (first part) of a compact JWS.
    ///
    /// - Throws: `OAuthError.idTokenRejected` when it is not a JSON object with an `alg`, when `alg`
    ///   is `none` (an unsigned token), or when it lists critical extensions (`crit`, RFC 7515
    ///   §4.1.11), none of which we implement.
    package init(token: String) throws(OAuthError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[0]), let json = JSONValue.parse(bytes),
            case .object = json
        else {
            throw .idTokenRejected("the ID token is not a signed JWT (a compact JWS of three base64url parts with a JSON header)")
        }
        guard let algorithm = json["alg"]?.stringValue, !algorithm.isEmpty else {
            throw .idTokenRejected("the ID token's header names no signature algorithm ('alg')")
        }
        if algorithm.lowercased() == "none" {
            throw .idTokenRejected("the ID token is not signed (its algorithm is 'none')")
        }
        if json["crit"] != nil {
            throw .idTokenRejected("the ID token's header lists critical extensions ('crit'), which are not implemented")
        }
        self.algorithm = algorithm
        keyID = json["kid"]?.stringValue
    }

    /// Throws unless `algorithm` is one of `signatureAlgorithms`.
    ///
    /// - Parameter keySetURI: the `jwks_uri` the signature is checked against, for the message.
    package func requireSignatureAlgorithm(keySetURI: String) throws(OAuthError) {
        guard Self.signatureAlgorithms.contains(algorithm) else {
            let kind = algorithm.hasPrefix("HS") ? "a shared-secret (HMAC) algorithm" : "an algorithm that is not supported"
            throw .idTokenRejected(
                "the ID token is signed with '\(algorithm)', \(kind); only the public-key algorithms of the keys at \(keySetURI) are accepted (\(Self.signatureAlgorithms.joined(separator: ", ")))"
            )
        }
    }
}
