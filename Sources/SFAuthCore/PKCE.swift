import Crypto

/// A Proof Key for Code Exchange pair (RFC 7636), always with the `S256` method.
package struct PKCE: Sendable, Equatable {
    /// The `code_verifier` sent with the token request (RFC 7636 §4.1): 43 base64url characters.
    package let verifier: String
    /// The `code_challenge` sent with the authorization request: BASE64URL(SHA256(verifier)) (§4.2).
    package let challenge: String
    /// The `code_challenge_method`; always `S256` (`plain` is never used).
    package var method: String { "S256" }

    /// Derives the challenge for a given verifier (used by tests with RFC 7636 Appendix B).
    package init(verifier: String) {
        self.verifier = verifier
        self.challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.utf8)))
    }

    /// A fresh pair: 32 bytes (256 bits) from the generator, base64url-encoded into the verifier.
    ///
    /// The verifier contains only base64url characters (no `~`), which Salesforce requires.
    package static func generate<Generator: RandomNumberGenerator>(using generator: inout Generator) -> PKCE {
        PKCE(verifier: Base64URL.encode(randomBytes(32, using: &generator)))
    }
}

/// Random values sent on the wire: `state` and `nonce`, 256 bits each, base64url.
package enum RandomToken {
    /// A 256-bit random string in base64url (43 characters).
    package static func generate<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        Base64URL.encode(randomBytes(32, using: &generator))
    }
}

func randomBytes<Generator: RandomNumberGenerator>(_ count: Int, using generator: inout Generator) -> [UInt8] {
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}
