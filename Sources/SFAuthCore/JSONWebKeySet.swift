/// A server's published signing keys (a JWK Set, RFC 7517 §5), fetched from its `jwks_uri`.
///
/// Only which key may have signed a token is decided here; the cryptography is the JOSE library's
/// (SFAuth's `IDTokenValidator`). Keys are kept as their JSON, so a set with key types we cannot use
/// (encryption keys, symmetric keys, curves we do not know) still yields the ones we can.
package struct JSONWebKeySet: Sendable, Equatable {
    /// One public key (RFC 7517 §4).
    package struct Key: Sendable, Equatable {
        /// The key's JSON object as published.
        package var json: JSONValue

        /// `kid`, when the key has one.
        package var keyID: String? { json["kid"]?.stringValue }
        /// `kty`: `RSA`, `EC`, `OKP`, …
        package var keyType: String? { json["kty"]?.stringValue }
        /// `alg`, when the server restricts the key to one algorithm.
        package var algorithm: String? { json["alg"]?.stringValue }
        /// `crv` of an `EC` or `OKP` key.
        package var curve: String? { json["crv"]?.stringValue }

        /// Whether the key may verify signatures: `use` absent or `sig`, and `key_ops` absent or
        /// listing `verify` (RFC 7517 §4.2, §4.3).
        package var isForSignatures: Bool {
            if let use = json["use"]?.stringValue, use != "sig" { return false }
            if case .array(let operations)? = json["key_ops"], !operations.contains(.string("verify")) { return false }
            return true
        }

        /// Whether this key can verify a signature made with `algorithm` (RFC 7518 §3.1, RFC 8037 §3.1):
        /// the right key type and curve, and the key's own `alg`, if it has one, equal to it.
        package func fits(algorithm: String) -> Bool {
            guard isForSignatures, self.algorithm == nil || self.algorithm == algorithm,
                let required = Self.keyType(for: algorithm)
            else { return false }
            return keyType == required.keyType && (required.curve == nil || curve == required.curve)
        }

        private static func keyType(for algorithm: String) -> (keyType: String, curve: String?)? {
            switch algorithm {
            case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512": return ("RSA", nil)
            case "ES256": return ("EC", "P-256")
            case "ES384": return ("EC", "P-384")
            case "ES512": return ("EC", "P-521")
            case "EdDSA": return ("OKP", "Ed25519")
            default: return nil
            }
        }
    }

    /// The keys, in the order published.
    package var keys: [Key]

    /// Creates a set from keys.
    package init(keys: [Key]) {
        self.keys = keys
    }

    /// Reads the response of a `jwks_uri`: a JSON object with a `keys` array.
    ///
    /// - Throws: `OAuthError.invalidServerResponse` for any other answer.
    package static func decode(_ response: HTTPResponse, uri: String) throws(OAuthError) -> JSONWebKeySet {
        guard response.status == 200 else {
            throw .invalidServerResponse(
                "the server's signing keys at \(uri) could not be read: HTTP \(response.status) with \(TokenResponse.describe(response))")
        }
        guard let json = JSONValue.parse(response.body), case .array(let keys)? = json["keys"] else {
            throw .invalidServerResponse("the server's signing keys at \(uri) are not a JWK Set (a JSON object with a 'keys' array)")
        }
        return JSONWebKeySet(
            keys: keys.compactMap { key in
                guard case .object = key else { return nil }
                return Key(json: key)
            })
    }

    /// The keys that may have signed a token with `header`: those with its `kid` when it names one
    /// (RFC 7515 §4.1.4), else every key; either way only keys that fit its algorithm.
    package func candidates(for header: IDTokenHeader) -> [Key] {
        keys.filter { key in
            (header.keyID == nil || key.keyID == header.keyID) && key.fits(algorithm: header.algorithm)
        }
    }

    /// Whether a key with this `kid` is in the set.
    package func containsKey(withID keyID: String) -> Bool {
        keys.contains { $0.keyID == keyID }
    }
}
