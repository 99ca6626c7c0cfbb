import FoundationEssentials
import JWTKit
import SFAuthCore

/// Checks a JWS signature with one published key, through vapor/jwt-kit (which does the RSA, ECDSA
/// and EdDSA verification on swift-crypto). Claims are not its business: `IDTokenCheck` checks them.
enum JWSSignatureVerifier {
    /// What one key made of a signature.
    enum Outcome: Sendable, Equatable {
        /// The key verifies the signature.
        case verified
        /// The key does not verify it.
        case mismatch
        /// The key cannot be used (e.g. an RSA key under 2048 bits); the reason, for messages.
        case unusableKey(String)
    }

    /// Verifies `token`'s signature as `algorithm` with `key`.
    ///
    /// The caller has checked that `algorithm` is an accepted public-key algorithm and that `key`
    /// fits it (`JSONWebKeySet.Key.fits(algorithm:)`); the key is pinned to that algorithm, so the
    /// token's header cannot choose another one for it.
    static func check(_ token: String, algorithm: String, key: JSONWebKeySet.Key) async -> Outcome {
        let keys = JWTKeyCollection()
        do {
            try await keys.add(jwk: try publicJWK(key, algorithm: algorithm))
        } catch {
            return .unusableKey(String(describing: error))
        }
        do {
            _ = try await keys.verify(token, as: AnyClaims.self)
            return .verified
        } catch {
            return .mismatch
        }
    }

    /// jwt-kit's JWK for `key`: only its public members (a private `d` published by mistake is left
    /// out), `alg` set to the algorithm being verified, and a `kid` (jwt-kit keys every key by one).
    private static func publicJWK(_ key: JSONWebKeySet.Key, algorithm: String) throws -> JWK {
        var members: [String: JSONValue] = ["alg": .string(algorithm), "kid": .string(key.keyID ?? "unnamed")]
        for name in ["kty", "n", "e", "crv", "x", "y"] {
            if let value = key.json[name] { members[name] = value }
        }
        let json = try JSONEncoder().encode(JSONValue.object(members))
        return try JSONDecoder().decode(JWK.self, from: json)
    }

    /// A payload that accepts any claims: jwt-kit only checks the signature here.
    private struct AnyClaims: JWTPayload {
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
