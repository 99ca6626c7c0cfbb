import Crypto
import Foundation
import JWTKit
import SFAuth
import Synchronization
import Testing

/// `OAuthCoordinator.authenticate(using:)` with a scripted token endpoint: the delegate's callbacks,
/// storage, the device grant's polling and cancellation, and JWT assertions jwt-kit can verify.
@Suite struct GrantCoordinatorTests {
    let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
                                     issuer: "https://idp.example", deviceAuthorizationEndpoint: "https://idp.example/device_authorization")
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-grants-" + UUID().uuidString)

    func coordinator(_ endpoint: SequenceEndpoint, client: ClientConfiguration = ClientConfiguration(clientId: "cli"),
                     delegate: Recorder, timeout: Duration = .seconds(30)) -> OAuthCoordinator {
        OAuthCoordinator(configuration: .init(server: server, client: client, timeout: timeout, browserLauncher: nil, fetchIdentity: false),
                         delegate: delegate, httpClient: endpoint, store: store)
    }

    @Test func deviceGrantPollsUntilApprovedAndStores() async throws {
        let endpoint = SequenceEndpoint([
            (200, #"{"device_code":"dc-1","user_code":"ABCD-EFGH","verification_uri":"https://idp.example/device","expires_in":600,"interval":1}"#),
            (400, #"{"error":"authorization_pending"}"#),
            (200, #"{"access_token":"device-at","refresh_token":"device-rt","expires_in":3600}"#),
        ])
        let delegate = Recorder(store: store)
        let credentials = try await coordinator(endpoint, delegate: delegate).authenticate(using: .deviceCode)

        #expect(credentials.accessToken == "device-at")
        #expect(credentials.obtainedBy == .deviceCode)
        #expect(delegate.events == ["willBegin", "didReceiveDeviceAuthorization(ABCD-EFGH)", "didAuthenticate(stored)"])
        #expect(delegate.authTypes == [.deviceCode, .deviceCode, .deviceCode])
        #expect(endpoint.requests.map(\.url) == ["https://idp.example/device_authorization", "https://idp.example/token", "https://idp.example/token"])
        #expect(endpoint.requests[1].bodyText.contains("device_code=dc-1"))
        #expect(try store.loadDefault()?.accessToken == "device-at")
    }

    @Test func cancellingTheDeviceGrantStopsPollingAndStoresNothing() async throws {
        let endpoint = SequenceEndpoint([
            (200, #"{"device_code":"dc","user_code":"WXYZ","verification_uri":"https://idp.example/device","expires_in":600,"interval":1}"#),
        ], thenRepeat: (400, #"{"error":"authorization_pending"}"#))
        let delegate = Recorder(store: store)
        let coordinator = coordinator(endpoint, delegate: delegate)
        let flow = Task { try await coordinator.authenticate(using: .deviceCode) }
        try await Task.sleep(for: .milliseconds(1500))
        let cancelledAt = ContinuousClock.now
        coordinator.cancel()
        await #expect(throws: OAuthError.cancelled) { try await flow.value }
        // Loose bound: our cancel ended it, not the code's ten-minute lifetime.
        #expect(ContinuousClock.now - cancelledAt < .seconds(5))
        #expect(delegate.events.last == "didFail(The sign-in was cancelled.)")
        #expect(try store.identifiers().isEmpty)
    }

    @Test func deviceGrantNeedsTheEndpoint() async {
        var plain = server
        plain.deviceAuthorizationEndpoint = nil
        let coordinator = OAuthCoordinator(configuration: .init(server: plain, client: ClientConfiguration(clientId: "cli"), browserLauncher: nil),
                                           delegate: nil, httpClient: SequenceEndpoint([]), store: store)
        await #expect {
            try await coordinator.authenticate(using: .deviceCode)
        } throws: { error in
            "\(error)".contains("no device authorization endpoint")
        }
    }

    @Test func clientCredentialsNeedASecretAndMakeAServiceAccount() async throws {
        let delegate = Recorder(store: store)
        await #expect {
            try await coordinator(SequenceEndpoint([]), delegate: delegate).authenticate(using: .clientCredentials)
        } throws: { error in
            "\(error)".contains("needs the client's secret")
        }
        let endpoint = SequenceEndpoint([(200, #"{"access_token":"svc-at","expires_in":300}"#)])
        let credentials = try await coordinator(endpoint, client: ClientConfiguration(clientId: "svc", clientSecret: "x"), delegate: delegate)
            .authenticate(using: .clientCredentials)
        #expect(credentials.identifier == "idp.example/client:svc")
        #expect(credentials.obtainedBy == .clientCredentials)
        #expect(endpoint.requests.first?.bodyText == "grant_type=client_credentials&client_id=svc&client_secret=x")
    }

    @Test func passwordGrantFailureKeepsWhatWasStored() async throws {
        let delegate = Recorder(store: store)
        _ = try await coordinator(SequenceEndpoint([(200, #"{"access_token":"first","refresh_token":"rt"}"#)]), delegate: delegate)
            .authenticate(using: .password(username: "alice", password: "right"))
        let before = try store.loadDefault()
        let rejected = SequenceEndpoint([(400, #"{"error":"invalid_grant","error_description":"Invalid credentials given."}"#)])
        await #expect(throws: OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant", description: "Invalid credentials given.", httpStatus: 400))) {
            try await coordinator(rejected, delegate: delegate).authenticate(using: .password(username: "alice", password: "wrong"))
        }
        #expect(try store.loadDefault() == before)
        #expect(before?.identifier == "idp.example/user:alice")
        #expect("\(Grant.password(username: "alice", password: "hunter2"))" == "password for alice")
    }

    @Test(arguments: ["rsa", "ec"])
    func jwtBearerAssertionVerifiesWithThePublicKey(kind: String) async throws {
        let keys = JWTKeyCollection()
        let pem: String
        if kind == "rsa" {
            let key = try Insecure.RSA.PrivateKey(pem: Self.rsaPrivateKeyPEM)
            pem = Self.rsaPrivateKeyPEM
            await keys.add(rsa: key.publicKey, digestAlgorithm: .sha256)
        } else {
            let key = P256.Signing.PrivateKey()
            pem = key.pemRepresentation
            await keys.add(ecdsa: try ES256PublicKey(pem: key.publicKey.pemRepresentation))
        }
        let signer = try await JWTAssertionSigner(privateKeyPEM: pem, source: "test key")
        #expect(signer.algorithm == (kind == "rsa" ? "RS256" : "ES256"))

        let endpoint = SequenceEndpoint([(200, #"{"access_token":"jwt-at"}"#)])
        let delegate = Recorder(store: store)
        let credentials = try await coordinator(endpoint, delegate: delegate)
            .authenticate(using: .jwtBearer(username: "ci@acme.test", signer: signer))
        #expect(credentials.identifier == "idp.example/user:ci@acme.test")
        #expect(delegate.authTypes.allSatisfy { $0 == .jwtBearer })

        let body = try #require(endpoint.requests.first).bodyText
        let assertion = try #require(body.split(separator: "&").first { $0.hasPrefix("assertion=") }?.dropFirst("assertion=".count))
        let claims = try await keys.verify(String(assertion), as: Claims.self)
        #expect(claims.iss.value == "cli")
        #expect(claims.sub.value == "ci@acme.test")
        #expect(claims.aud.value == ["https://idp.example"])
        #expect(claims.exp.value.timeIntervalSince(claims.iat.value) == 180)
    }

    @Test func notAPrivateKeyIsAClearError() async {
        await #expect {
            try await JWTAssertionSigner(privateKeyPEM: P256.Signing.PrivateKey().publicKey.pemRepresentation, source: "/tmp/key.pem")
        } throws: { error in
            "\(error)" == "Configuration error: /tmp/key.pem is not a usable private key: it holds a public key or certificate; give the private key"
        }
        await #expect {
            try await JWTAssertionSigner(privateKeyFile: "/nonexistent/key.pem")
        } throws: { error in
            "\(error)".contains("/nonexistent/key.pem does not exist")
        }
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim
        var jti: IDClaim
        func verify(using algorithm: some JWTAlgorithm) async throws { try exp.verifyNotExpired() }
    }

    /// A 2048-bit RSA test key (generated for these tests; it protects nothing).
    static let rsaPrivateKeyPEM = try! String(contentsOfFile: #filePath.replacingOccurrences(of: "GrantCoordinatorTests.swift", with: "Fixtures/jwt-test-rsa.pem"), encoding: .utf8)
}

/// Answers requests with a fixed sequence of JSON responses, then repeats the last one given.
final class SequenceEndpoint: HTTPClient, @unchecked Sendable {
    private let replies: Mutex<[(Int, String)]>
    private let repeated: (Int, String)?
    private let recorded = Mutex<[HTTPRequest]>([])

    init(_ replies: [(Int, String)], thenRepeat repeated: (Int, String)? = nil) {
        self.replies = Mutex(replies)
        self.repeated = repeated
    }

    var requests: [HTTPRequest] { recorded.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        let reply = replies.withLock { $0.isEmpty ? nil : $0.removeFirst() } ?? repeated
        guard let (status, body) = reply else { throw HTTPTransportError(kind: .connect, message: "no more scripted replies") }
        return HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(body.utf8))
    }
}
