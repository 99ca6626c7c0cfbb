import FoundationEssentials
import Glibc
import JWTKit
import SFAuthCore

/// Signs JWT bearer assertions (RFC 7523) with the client's private key: RS256 for an RSA key,
/// ES256 for an EC P-256 key, as Salesforce and most servers accept. jwt-kit does the JOSE work.
public struct JWTAssertionSigner: Sendable {
    private let keys: JWTKeyCollection
    /// The JWS algorithm the key signs with: `RS256` or `ES256`.
    public let algorithm: String
    /// The key id put in the JWS header (`kid`), when given; servers with several keys per client use it.
    public let keyID: String?
    /// The absolute path of the key file, when the key was read from one (kept with a JWT bearer
    /// account so its next assertion can be signed without a person).
    public private(set) var keyFile: String?

    /// Reads a PEM private key: RSA (PKCS#1 `RSA PRIVATE KEY` or PKCS#8 `PRIVATE KEY`, at least 2048
    /// bits) or EC P-256 (SEC 1 `EC PRIVATE KEY` or PKCS#8).
    ///
    /// - Parameters:
    ///   - pem: the PEM text of the private key.
    ///   - source: where the key came from, for error messages (a file path).
    ///   - keyID: the `kid` put in the assertions' header, when the server wants one. Default: none.
    /// - Throws: `OAuthError.configuration` when the text is no such key.
    public init(privateKeyPEM pem: String, source: String, keyID: String? = nil) async throws(OAuthError) {
        let keys = JWTKeyCollection()
        let kid = keyID.map { JWKIdentifier(string: $0) }
        if let rsa = try? Insecure.RSA.PrivateKey(pem: pem) {
            await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: kid)
            algorithm = "RS256"
        } else if let ec = try? ES256PrivateKey(pem: pem) {
            await keys.add(ecdsa: ec, kid: kid)
            algorithm = "ES256"
        } else {
            let hint =
                pem.contains("PUBLIC KEY") || pem.contains("CERTIFICATE")
                ? "it holds a public key or certificate; give the private key"
                : "expected an RSA (2048 bits or more) or EC P-256 private key in PEM form"
            throw .configuration("\(source) is not a usable private key: \(hint)")
        }
        self.keys = keys
        self.keyID = keyID
    }

    /// Reads the private key from a PEM file.
    public init(privateKeyFile path: String, keyID: String? = nil) async throws(OAuthError) {
        let bytes: [UInt8]?
        do {
            bytes = try POSIXFile.read(path, limit: 64 * 1024)
        } catch {
            throw .configuration("the private key file: \(error)")
        }
        guard let bytes else { throw .configuration("the private key file \(path) does not exist") }
        try await self.init(privateKeyPEM: String(decoding: bytes, as: UTF8.self), source: path, keyID: keyID)
        keyFile = Self.absolute(path)
    }

    /// The JWT bearer token request (RFC 7523 §2.1) with a fresh assertion, issued now, saying that
    /// `client` speaks for `username` to `audience`.
    package func tokenRequest(
        username: String, audience: String, tokenEndpoint: String, client: ClientConfiguration,
        now: Date
    ) async throws(OAuthError) -> HTTPRequest {
        var random = SystemRandomNumberGenerator()
        let claims = JWTBearerAssertion(clientId: client.clientId, username: username, audience: audience, now: now, using: &random)
        return TokenRequest.jwtBearer(assertion: try await sign(claims), tokenEndpoint: tokenEndpoint, client: client)
    }

    /// The signed assertion (compact JWS) for these claims.
    package func sign(_ assertion: JWTBearerAssertion) async throws(OAuthError) -> String {
        let payload = AssertionPayload(
            iss: IssuerClaim(value: assertion.issuer), sub: SubjectClaim(value: assertion.subject),
            aud: AudienceClaim(value: assertion.audience),
            iat: IssuedAtClaim(value: Date(timeIntervalSince1970: TimeInterval(assertion.issuedAt))),
            exp: ExpirationClaim(value: Date(timeIntervalSince1970: TimeInterval(assertion.expiresAt))),
            jti: IDClaim(value: assertion.jwtID))
        do {
            return try await keys.sign(payload, kid: keyID.map { JWKIdentifier(string: $0) })
        } catch {
            throw .configuration("the JWT bearer assertion could not be signed: \(error)")
        }
    }
}

extension JWTAssertionSigner {
    /// `path` made absolute against the current directory, so it still names the file when a later
    /// command runs elsewhere.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let directory = getcwd(nil, 0) else { return path }
        defer { free(directory) }
        return String(cString: directory) + "/" + path
    }
}

/// The RFC 7523 §3 claims as jwt-kit serialises them.
private struct AssertionPayload: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var jti: IDClaim

    /// We only sign these; the server verifies them.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
