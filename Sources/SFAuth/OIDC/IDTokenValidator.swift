import FoundationEssentials
import SFAuthCore

/// Validates ID tokens (OIDC Core §3.1.3.7; §12.2 for refreshes): the signature against the
/// server's published keys, then issuer, audience, authorized party, expiry, issue time and nonce.
///
/// The signature is checked whenever the server has a `jwks_uri`, with any of
/// `IDTokenHeader.signatureAlgorithms` (never `none` or HMAC). Keys are fetched over the
/// `HTTPClient` and cached per `jwks_uri` for the validator's lifetime; a token signed with a key
/// the cached set lacks makes it fetch the set once more (key rotation). Without a `jwks_uri` the
/// signature is not checked: the token came straight from the token endpoint over TLS, which OIDC
/// Core §3.1.3.7 item 6 allows to stand in for it. The claims are checked either way.
///
/// ```swift
/// let validator = IDTokenValidator(httpClient: CurlHTTPClient())
/// let claims = try await validator.validate(idToken, server: server, clientId: "my-cli", nonce: request.nonce, now: Date())
/// ```
package final class IDTokenValidator: Sendable {
    /// How far the clocks of this machine and the server may disagree, in seconds. Default: 60.
    package let leeway: TimeInterval
    private let keySets: KeySetCache

    /// Creates a validator with an empty key cache.
    ///
    /// - Parameters:
    ///   - httpClient: fetches the servers' key sets. Default: `CurlHTTPClient()`.
    ///   - leeway: allowed clock difference for `exp` and `iat`, in seconds. Default: 60.
    package init(httpClient: any HTTPClient = CurlHTTPClient(), leeway: TimeInterval = 60) {
        self.leeway = leeway
        keySets = KeySetCache(httpClient: httpClient)
    }

    /// Validates the ID token of a sign-in and returns its claims.
    ///
    /// - Parameters:
    ///   - idToken: the `id_token` of the token response.
    ///   - server: its issuer (`iss` must equal it, except for Salesforce — see `expectedIssuer(of:)`)
    ///     and `jwks_uri` (the signature is checked against it when present).
    ///   - clientId: must be among the audiences (`aud`) and equal `azp` when present.
    ///   - nonce: the `nonce` the authorization request sent, which the token must carry; `nil` when none was sent.
    ///   - now: this machine's time.
    /// - Throws: `OAuthError.idTokenRejected` naming the check that failed; `.network` or
    ///   `.invalidServerResponse` when the key set cannot be fetched.
    package func validate(
        _ idToken: String, server: AuthorizationServer, clientId: String, nonce: String?,
        now: Date
    ) async throws(OAuthError) -> IDTokenClaims {
        let check = IDTokenCheck(issuer: Self.expectedIssuer(of: server), clientId: clientId, nonce: nonce, leeway: leeway)
        return try await validate(idToken, server: server, check: check, now: now)
    }

    /// Validates the ID token of a refresh response (OIDC Core §12.2) and returns its claims: the
    /// checks of a sign-in without a nonce, and the same issuer, subject, audiences and authorized
    /// party as the sign-in's ID token.
    ///
    /// - Parameter original: the sign-in's ID token (validated when it arrived); `nil` when there was none.
    package func validateRefreshed(
        _ idToken: String, original: String?, server: AuthorizationServer, clientId: String,
        now: Date
    ) async throws(OAuthError) -> IDTokenClaims {
        let check = IDTokenCheck(
            issuer: Self.expectedIssuer(of: server), clientId: clientId, nonce: nil,
            original: original.flatMap(IDTokenClaims.init(unverifiedToken:)), leeway: leeway)
        return try await validate(idToken, server: server, check: check, now: now)
    }

    /// The `iss` an ID token of `server` must carry: its issuer — except for Salesforce, whose
    /// issuer here is the login host sfauth was given (not one the server published), while its ID
    /// tokens name the host that authenticated the user, which can differ (My Domain, Experience Cloud).
    package static func expectedIssuer(of server: AuthorizationServer) -> String? {
        server.flavor == .salesforce ? nil : server.issuer
    }

    // MARK: - Steps

    private func validate(
        _ idToken: String, server: AuthorizationServer, check: IDTokenCheck,
        now: Date
    ) async throws(OAuthError) -> IDTokenClaims {
        let header = try IDTokenHeader(token: idToken)
        let claims = try IDTokenClaims(token: idToken)
        if let keySetURI = server.jwksURI {
            try await verifySignature(of: idToken, header: header, keySetURI: keySetURI)
        }
        try check.validate(claims, now: now)
        return claims
    }

    /// Verifies the signature with the published key(s) that fit the header, fetching the key set
    /// once more when the cached one has none (the server rotated its keys since it was fetched).
    private func verifySignature(of idToken: String, header: IDTokenHeader, keySetURI: String) async throws(OAuthError) {
        try header.requireSignatureAlgorithm(keySetURI: keySetURI)
        var lookup = try await keySets.keySet(at: keySetURI)
        var candidates = lookup.keySet.candidates(for: header)
        if candidates.isEmpty && !lookup.fetchedNow {
            lookup = try await keySets.keySet(at: keySetURI, refresh: true)
            candidates = lookup.keySet.candidates(for: header)
        }
        guard !candidates.isEmpty else {
            throw .idTokenRejected(Self.noKeyMessage(header: header, keySet: lookup.keySet, keySetURI: keySetURI))
        }
        var unusable: [String] = []
        for key in candidates {
            switch await JWSSignatureVerifier.check(idToken, algorithm: header.algorithm, key: key) {
            case .verified: return
            case .mismatch: continue
            case .unusableKey(let reason): unusable.append("'\(key.keyID ?? "unnamed")': \(reason)")
            }
        }
        if unusable.count == candidates.count {
            throw .idTokenRejected(
                "the key that signed the ID token cannot be used (\(unusable.joined(separator: "; "))); the keys are at \(keySetURI)")
        }
        throw .idTokenRejected("the ID token's signature does not verify against the keys at \(keySetURI)")
    }

    private static func noKeyMessage(header: IDTokenHeader, keySet: JSONWebKeySet, keySetURI: String) -> String {
        guard let keyID = header.keyID else {
            return "none of the keys at \(keySetURI) can verify the ID token's '\(header.algorithm)' signature"
        }
        if keySet.containsKey(withID: keyID) {
            return "the key '\(keyID)' at \(keySetURI) cannot verify the ID token's '\(header.algorithm)' signature (another key type or algorithm)"
        }
        return "the ID token was signed with the key '\(keyID)', which is not among the keys at \(keySetURI) (fetched just now)"
    }
}
