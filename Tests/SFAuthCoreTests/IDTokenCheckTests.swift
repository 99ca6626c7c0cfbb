import Foundation
import SFAuthCore
import Testing

/// The pure parts of ID token validation: reading header and claims, each claim check with its
/// message (OIDC Core §3.1.3.7, §12.2), and choosing the published key that may have signed a token.
@Suite struct IDTokenCheckTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z
    let check = IDTokenCheck(issuer: "https://idp.example", clientId: "cli", nonce: "n-1")

    /// An unsigned compact JWS with these claims (signatures are SFAuth's business).
    static func token(_ claims: [String: JSONValue], header: [String: JSONValue] = ["alg": "RS256", "kid": "k1"]) -> String {
        func part(_ object: [String: JSONValue]) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return Base64URL.encode(try! encoder.encode(JSONValue.object(object)))
        }
        return part(header) + "." + part(claims) + ".c2lnbmF0dXJl"
    }

    /// Valid claims for `check` at `now`, with `changes` applied (`nil` removes a claim).
    static func claims(_ changes: [String: JSONValue?] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": "https://idp.example", "sub": "user-1", "aud": "cli", "exp": 1_800_000_600,
            "iat": 1_800_000_000, "nonce": "n-1", "preferred_username": "alice",
        ]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    func validate(_ changes: [String: JSONValue?], check: IDTokenCheck? = nil, now: Date = Self.now) throws(OAuthError) {
        try (check ?? self.check).validate(try IDTokenClaims(token: Self.token(Self.claims(changes))), now: now)
    }

    /// The message `validate` throws, or `nil` when the token passes.
    func rejection(_ changes: [String: JSONValue?], check: IDTokenCheck? = nil, now: Date = Self.now) -> String? {
        do {
            try validate(changes, check: check, now: now)
            return nil
        } catch .idTokenRejected(let message) {
            return message
        } catch {
            return "unexpected \(error)"
        }
    }

    // MARK: - Reading

    @Test func claimsAreRead() throws {
        let claims = try IDTokenClaims(token: Self.token(Self.claims(["aud": ["cli", "api"], "azp": "cli", "email": "a@example.test"])))
        #expect(claims.subject == "user-1")
        #expect(claims.issuer == "https://idp.example")
        #expect(claims.audiences == ["cli", "api"])
        #expect(claims.authorizedParty == "cli")
        #expect(claims.expiresAt == Date(timeIntervalSince1970: 1_800_000_600))
        #expect(claims.issuedAt == Self.now)
        #expect(claims.nonce == "n-1")
        #expect(claims.preferredUsername == "alice")
        #expect(claims.email == "a@example.test")
    }

    @Test func notAJWTOrNoSubjectIsRejectedWithTheReason() {
        #expect(throws: OAuthError.idTokenRejected("the ID token is not a signed JWT (a compact JWS of three base64url parts with a JSON payload)")) {
            try IDTokenClaims(token: "not-a-jwt")
        }
        #expect(throws: OAuthError.idTokenRejected("the ID token has no 'sub' (subject) claim")) {
            try IDTokenClaims(token: Self.token(Self.claims(["sub": nil])))
        }
        #expect(IDTokenClaims(unverifiedToken: "a.b.c") == nil)
    }

    @Test func headerGivesAlgorithmAndKey() throws {
        let header = try IDTokenHeader(token: Self.token(Self.claims(), header: ["alg": "ES256", "kid": "ec-1", "typ": "JWT"]))
        #expect(header == IDTokenHeader(algorithmForTesting: "ES256", keyID: "ec-1"))
    }

    @Test(
        arguments: [
            (["alg": "none"], "the ID token is not signed (its algorithm is 'none')"),
            (["alg": "None"], "the ID token is not signed (its algorithm is 'none')"),
            (["typ": "JWT"], "the ID token's header names no signature algorithm ('alg')"),
            (["alg": "RS256", "crit": ["exp"]], "the ID token's header lists critical extensions ('crit'), which are not implemented"),
        ] as [([String: JSONValue], String)])
    func unusableHeadersAreRejected(header: [String: JSONValue], message: String) {
        #expect(throws: OAuthError.idTokenRejected(message)) { try IDTokenHeader(token: Self.token(Self.claims(), header: header)) }
    }

    @Test func hmacIsNotASignatureAlgorithmForIDTokens() throws {
        let header = try IDTokenHeader(token: Self.token(Self.claims(), header: ["alg": "HS256"]))
        #expect(
            throws: OAuthError.idTokenRejected(
                "the ID token is signed with 'HS256', a shared-secret (HMAC) algorithm; only the public-key algorithms of the keys at https://idp.example/jwks are accepted (RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA)"
            )
        ) {
            try header.requireSignatureAlgorithm(keySetURI: "https://idp.example/jwks")
        }
        try IDTokenHeader(token: Self.token(Self.claims(), header: ["alg": "PS256"])).requireSignatureAlgorithm(keySetURI: "u")
    }

    // MARK: - Claim checks, each with its message

    @Test func aValidTokenPasses() throws {
        try validate([:])
        // Several audiences are fine when ours is among them and azp names us.
        try validate(["aud": ["cli", "api"], "azp": "cli"])
        // Within the leeway: expired 30 s ago, issued 30 s ahead of this machine's clock.
        try validate(["exp": 1_799_999_970, "iat": 1_800_000_030])
    }

    @Test(
        arguments: [
            (
                ["iss": "https://other.example"],
                "the ID token was issued by 'https://other.example', not by this server's issuer 'https://idp.example'"
            ),
            (["iss": nil], "the ID token has no 'iss' (issuer) claim"),
            (["aud": "someone-else"], "the ID token is for audience 'someone-else', not this client 'cli'"),
            (["aud": ["a", "b"]], "the ID token is for audiences 'a', 'b', not this client 'cli'"),
            (["aud": nil], "the ID token has no 'aud' (audience) claim"),
            (["aud": ["cli", "api"], "azp": "api"], "the ID token was issued to the client 'api' ('azp'), not to this client 'cli'"),
            (["exp": 1_799_999_900], "the ID token expired at 2027-01-15T07:58:20Z (this machine's clock says 2027-01-15T08:00:00Z)"),
            (["exp": nil], "the ID token has no 'exp' (expiry) claim"),
            (
                ["iat": 1_800_000_100],
                "the ID token was issued in the future, at 2027-01-15T08:01:40Z (this machine's clock says 2027-01-15T08:00:00Z)"
            ),
            (["iat": nil], "the ID token has no 'iat' (issued at) claim"),
            (["nonce": "n-2"], "the ID token's nonce does not match this login's"),
            (["nonce": nil], "the ID token has no nonce, but this login sent one"),
        ] as [([String: JSONValue?], String)])
    func eachFailedCheckSaysWhich(changes: [String: JSONValue?], message: String) {
        #expect(rejection(changes) == message)
    }

    @Test func unknownIssuerAndNoNonceAreNotChecked() throws {
        let lenient = IDTokenCheck(issuer: nil, clientId: "cli", nonce: nil)
        try validate(["iss": "https://anything.example", "nonce": nil], check: lenient)
        try validate(["nonce": "whatever"], check: lenient)
        // The issuer must still be there.
        #expect(rejection(["iss": nil], check: lenient) == "the ID token has no 'iss' (issuer) claim")
    }

    @Test func leewayIsConfigurable() {
        let strict = IDTokenCheck(issuer: "https://idp.example", clientId: "cli", nonce: "n-1", leeway: 0)
        #expect(rejection(["exp": 1_800_000_000], check: strict)?.hasPrefix("the ID token expired at") == true)
        #expect(rejection(["exp": 1_800_000_001], check: strict) == nil)
    }

    // MARK: - Refresh (§12.2)

    @Test func aRefreshedTokenMustDescribeTheSameSignIn() throws {
        let original = try IDTokenClaims(token: Self.token(Self.claims()))
        let refresh = IDTokenCheck(issuer: "https://idp.example", clientId: "cli", nonce: nil, original: original)
        try validate(["nonce": nil, "iat": 1_800_000_000], check: refresh)
        #expect(rejection(["sub": "user-2"], check: refresh) == "the refreshed ID token is for the subject 'user-2', not 'user-1' who signed in")
        #expect(rejection(["aud": ["cli", "api"]], check: refresh) == "the refreshed ID token is for 'cli', 'api', not 'cli' like the sign-in's")
        #expect(rejection(["azp": "cli"], check: refresh) == "the refreshed ID token names the authorized party 'cli', not none like the sign-in's")
        let unknownIssuer = IDTokenCheck(issuer: nil, clientId: "cli", nonce: nil, original: original)
        #expect(
            rejection(["iss": "https://other.example"], check: unknownIssuer)
                == "the refreshed ID token was issued by 'https://other.example', not by 'https://idp.example' like the sign-in's")
    }

    // MARK: - Which key

    static let keySetJSON = #"""
        {"keys": [
          {"kty": "RSA", "kid": "rsa-1", "use": "sig", "alg": "RS256", "n": "AQAB", "e": "AQAB"},
          {"kty": "RSA", "kid": "rsa-enc", "use": "enc", "n": "AQAB", "e": "AQAB"},
          {"kty": "RSA", "kid": "rsa-any", "n": "AQAB", "e": "AQAB"},
          {"kty": "EC", "kid": "ec-1", "crv": "P-256", "x": "AA", "y": "AA"},
          {"kty": "EC", "kid": "ec-384", "crv": "P-384", "x": "AA", "y": "AA"},
          {"kty": "OKP", "kid": "ed-1", "crv": "Ed25519", "x": "AA", "key_ops": ["verify"]},
          {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
          "not a key"
        ]}
        """#

    @Test func keysAreChosenByKidTypeCurveUseAndAlgorithm() throws {
        let keySet = try JSONWebKeySet.decode(HTTPResponse(status: 200, body: Array(Self.keySetJSON.utf8)), uri: "https://idp.example/jwks")
        #expect(keySet.keys.count == 7)
        func chosen(_ alg: String, _ kid: String?) -> [String] {
            keySet.candidates(for: IDTokenHeader(algorithmForTesting: alg, keyID: kid)).compactMap(\.keyID)
        }
        #expect(chosen("RS256", "rsa-1") == ["rsa-1"])
        #expect(chosen("RS256", nil) == ["rsa-1", "rsa-any"])  // no kid: every RSA signing key
        #expect(chosen("PS256", nil) == ["rsa-any"])  // rsa-1 is pinned to RS256
        #expect(chosen("RS256", "rsa-enc").isEmpty)  // an encryption key never verifies
        #expect(chosen("ES256", nil) == ["ec-1"])
        #expect(chosen("ES384", "ec-1").isEmpty)  // wrong curve
        #expect(chosen("EdDSA", nil) == ["ed-1"])
        #expect(chosen("HS256", "secret").isEmpty)
        #expect(chosen("RS256", "nobody").isEmpty)
        #expect(keySet.containsKey(withID: "ec-1"))
        #expect(!keySet.containsKey(withID: "nobody"))
    }

    @Test func aKeySetEndpointThatAnswersSomethingElseIsAnInvalidResponse() {
        #expect(
            throws: OAuthError.invalidServerResponse(
                "the server's signing keys at https://idp.example/jwks could not be read: HTTP 503 with an empty body")
        ) {
            try JSONWebKeySet.decode(HTTPResponse(status: 503), uri: "https://idp.example/jwks")
        }
        #expect(
            throws: OAuthError.invalidServerResponse(
                "the server's signing keys at https://idp.example/jwks are not a JWK Set (a JSON object with a 'keys' array)")
        ) {
            try JSONWebKeySet.decode(HTTPResponse(status: 200, body: Array(#"{"n":"x"}"#.utf8)), uri: "https://idp.example/jwks")
        }
    }
}

extension IDTokenHeader {
    /// A header from its fields, for comparisons.
    init(algorithmForTesting algorithm: String, keyID: String?) {
        var header: [String: JSONValue] = ["alg": .string(algorithm)]
        if let keyID { header["kid"] = .string(keyID) }
        try! self.init(token: IDTokenCheckTests.token(["sub": "x"], header: header))
    }
}

// Literals for the claims above. (Test-only: the library never builds JSON this way.)
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .number(Double(value)) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}
