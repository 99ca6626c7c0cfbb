import FoundationEssentials
import SFAuth

/// An ID token and the server's key set: `IDTokenHeader`, `IDTokenClaims` (checked and unverified),
/// `JSONWebKeySet.decode` and the choice of keys, and every claim check of `IDTokenCheck` for a
/// sign-in and for a refresh.
///
/// Input: three sections separated by a line `---`: the JOSE header (JSON), the claims (JSON), the
/// JWK Set (JSON). The harness base64url-encodes the first two into a compact JWS (so the fuzzer
/// mutates the JSON, not its base64), and also reads the first section as a raw compact token.
@Sendable func fuzzIDToken(_ data: UnsafeRawBufferPointer) {
    let sections = FuzzInput.sections(data, limit: 3)
    let header = sections[0]
    let payload = sections.count > 1 ? sections[1] : []
    let token = Base64URL.encode(header) + "." + Base64URL.encode(payload) + ".c2lnbmF0dXJl"
    let raw = FuzzInput.text(header)

    for candidate in [token, raw] {
        readToken(candidate, keySet: sections.count > 2 ? Array(sections[2]) : nil)
    }
}

private let baseline = IDTokenClaims(
    unverifiedToken:
        Base64URL.encode(Array(#"{"alg":"RS256","kid":"k1"}"#.utf8)) + "."
        + Base64URL.encode(
            Array(#"{"iss":"https://idp.example","sub":"248289761001","aud":"my-cli","exp":1777892400,"iat":1777888800,"nonce":"n-0S6_WzA2Mj"}"#.utf8)
        )
        + ".c2ln")

private func readToken(_ token: String, keySet: [UInt8]?) {
    var header: IDTokenHeader?
    do {
        header = try IDTokenHeader(token: token)
        try header?.requireSignatureAlgorithm(keySetURI: "https://idp.example/jwks")
    } catch {
        consume(error)
    }
    if let keySet {
        do {
            let keys = try JSONWebKeySet.decode(
                HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: keySet),
                uri: "https://idp.example/jwks")
            if let header {
                _ = keys.candidates(for: header)
                if let keyID = header.keyID { _ = keys.containsKey(withID: keyID) }
            }
            for key in keys.keys {
                _ = key.isForSignatures
                for algorithm in IDTokenHeader.signatureAlgorithms { _ = key.fits(algorithm: algorithm) }
            }
        } catch {
            consume(error)
        }
    }
    _ = IDTokenClaims(unverifiedToken: token)
    let claims: IDTokenClaims
    do {
        claims = try IDTokenClaims(token: token)
    } catch {
        consume(error)
        return
    }
    let checks = [
        IDTokenCheck(issuer: "https://idp.example", clientId: "my-cli", nonce: "n-0S6_WzA2Mj"),
        IDTokenCheck(issuer: nil, clientId: "my-cli", nonce: nil, original: claims),
        IDTokenCheck(issuer: "https://idp.example", clientId: "my-cli", nonce: nil, original: baseline),
    ]
    for check in checks {
        for now in [fuzzNow, fuzzNow.addingTimeInterval(-86_400 * 365 * 100)] {
            do { try check.validate(claims, now: now) } catch { consume(error) }
        }
    }
    // Naming an account after the claims.
    var credentials = OAuthCredentials(
        response: TokenResponse(accessToken: "a", idToken: token), server: FuzzServers.oidc,
        client: ClientConfiguration(clientId: "my-cli"), obtainedBy: .browser, now: fuzzNow)
    credentials.name(after: claims, grantUsername: nil)
    _ = credentials.displayLabel
}
