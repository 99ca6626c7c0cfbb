import Crypto
import Foundation
import JWTKit
import SFAuth
import Testing

/// `OAuthCoordinator.authenticate(using:)` with a scripted token endpoint: the delegate's callbacks,
/// storage, the device grant's polling and cancellation, and JWT assertions jwt-kit can verify.
@Suite struct GrantCoordinatorTests {
    let server = AuthorizationServer(
        authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
        issuer: "https://idp.example", deviceAuthorizationEndpoint: "https://idp.example/device_authorization")
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-grants-" + UUID().uuidString)

    func coordinator(
        _ endpoint: FakeHTTPClient, client: ClientConfiguration = ClientConfiguration(clientId: "cli"),
        delegate: Recorder, timeout: Duration = .seconds(30), clock: TestClock = TestClock()
    ) -> OAuthCoordinator {
        OAuthCoordinator(
            configuration: .init(server: server, client: client, timeout: timeout, browserLauncher: nil, fetchIdentity: false),
            delegate: delegate, httpClient: endpoint, store: store, clock: clock)
    }

    /// A device authorization endpoint answering with these codes, and a token endpoint answering
    /// `polls` in order, then `pending` for ever.
    func deviceEndpoints(
        expiresIn: Int = 600, interval: Int = 1, userCode: String = "ABCD-EFGH",
        polls: [FakeHTTPClient.Reply] = []
    ) -> FakeHTTPClient {
        FakeHTTPClient()
            .on(
                .url("https://idp.example/device_authorization"),
                reply: .json(
                    200,
                    #"{"device_code":"dc-1","user_code":"\#(userCode)","verification_uri":"https://idp.example/device","expires_in":\#(expiresIn),"interval":\#(interval)}"#
                )
            )
            .on(.url("https://idp.example/token"), replies: polls, then: Self.pending)
    }

    static let pending = FakeHTTPClient.Reply.json(400, #"{"error":"authorization_pending"}"#)
    static let deviceTokens = FakeHTTPClient.Reply.json(200, #"{"access_token":"device-at","refresh_token":"device-rt","expires_in":3600}"#)

    @Test func deviceGrantPollsUntilApprovedAndStores() async throws {
        let endpoint = deviceEndpoints(polls: [Self.pending, Self.deviceTokens])
        let delegate = Recorder(store: store)
        let clock = TestClock()
        let credentials = try await coordinator(endpoint, delegate: delegate, clock: clock).authenticate(using: .deviceCode)

        #expect(credentials.accessToken == "device-at")
        #expect(credentials.obtainedBy == .deviceCode)
        #expect(delegate.events == ["willBegin", "didReceiveDeviceAuthorization(ABCD-EFGH)", "didAuthenticate(stored)"])
        #expect(delegate.authTypes == [.deviceCode, .deviceCode, .deviceCode])
        #expect(
            endpoint.requests.map(\.url) == ["https://idp.example/device_authorization", "https://idp.example/token", "https://idp.example/token"])
        #expect(endpoint.requests[1].bodyText.contains("device_code=dc-1"))
        #expect(try store.loadDefault()?.accessToken == "device-at")
        // §3.5: the interval before each poll, the first one included; one cancellable sleep each.
        #expect(clock.monotonicNow() == .seconds(2))
        #expect(clock.sleeps == [.seconds(1), .seconds(1)])
    }

    /// OIDC Core §3.1.3.3 (an ID token must come) is the code flow's: a device or password grant
    /// asking for `openid` from a server with signing keys may come back without one (Glewlwyd's and
    /// django-oauth-toolkit's device grants do), and is not refused after the person approved.
    @Test func grantsWithOpenIDNeedNoIDToken() async throws {
        var server = self.server
        server.jwksURI = "https://idp.example/jwks"
        let client = ClientConfiguration(clientId: "cli", scopes: ["openid", "profile"])
        let granted = FakeHTTPClient.Reply.json(200, #"{"access_token":"at","refresh_token":"rt","expires_in":3600,"scope":"openid profile"}"#)
        for grant in [Grant.deviceCode, .password(username: "alice", password: "pw")] {
            let endpoint = deviceEndpoints(polls: [granted])
            let coordinator = OAuthCoordinator(
                configuration: .init(server: server, client: client, browserLauncher: nil, fetchIdentity: false),
                delegate: nil, httpClient: endpoint, store: store, clock: TestClock())
            let credentials = try await coordinator.authenticate(using: grant)
            #expect(credentials.accessToken == "at")
            #expect(credentials.scopes == ["openid", "profile"])
        }
    }

    @Test func slowDownAddsFiveSecondsToEveryLaterWait() async throws {
        let endpoint = deviceEndpoints(polls: [Self.pending, .json(400, #"{"error":"slow_down"}"#), Self.pending, Self.deviceTokens])
        let clock = TestClock()
        let credentials = try await coordinator(endpoint, delegate: Recorder(store: store), clock: clock).authenticate(using: .deviceCode)
        #expect(credentials.accessToken == "device-at")
        // Polls at 1 s, 2 s (slow_down: the interval becomes 6 s), 8 s and 14 s.
        #expect(clock.monotonicNow() == .seconds(14))
        #expect(endpoint.count == 5)
    }

    @Test func theDeviceCodeExpiringEndsThePolling() async throws {
        let endpoint = deviceEndpoints(expiresIn: 5, userCode: "WXYZ")
        let clock = TestClock()
        let delegate = Recorder(store: store)
        let error = await #expect(throws: OAuthError.self) {
            try await coordinator(endpoint, delegate: delegate, clock: clock).authenticate(using: .deviceCode)
        }
        guard case .timedOut(let seconds, let hint)? = error else {
            Issue.record("not a timeout: \(String(describing: error))")
            return
        }
        #expect(seconds == 5)
        #expect(hint.text.contains("WXYZ"))
        // Polls at 1, 2, 3 and 4 s; at 5 s the code is gone, and nobody asks again.
        #expect(endpoint.count == 5)
        #expect(clock.monotonicNow() == .seconds(5))
        #expect(try store.identifiers().isEmpty)
    }

    @Test func theConfiguredTimeoutEndsThePollingBeforeTheCodeExpires() async throws {
        let endpoint = deviceEndpoints(expiresIn: 600)
        let clock = TestClock()
        let error = await #expect(throws: OAuthError.self) {
            try await coordinator(endpoint, delegate: Recorder(store: store), timeout: .seconds(3), clock: clock).authenticate(using: .deviceCode)
        }
        guard case .timedOut(let seconds, _)? = error else {
            Issue.record("not a timeout: \(String(describing: error))")
            return
        }
        #expect(seconds == 3)
        #expect(endpoint.count == 3)  // the device authorization, then polls at 1 and 2 s
        #expect(clock.monotonicNow() == .seconds(3))
    }

    @Test func cancellingTheDeviceGrantStopsPollingAndStoresNothing() async throws {
        let endpoint = deviceEndpoints(userCode: "WXYZ")
        let delegate = Recorder(store: store)
        let clock = TestClock()
        let coordinator = coordinator(endpoint, delegate: delegate, clock: clock)
        // cancel() from elsewhere while the flow waits for its second poll.
        clock.onSleep { _ in if endpoint.count == 2 { coordinator.cancel() } }
        await #expect(throws: OAuthError.cancelled) { try await coordinator.authenticate(using: .deviceCode) }
        // Our cancel ended the wait it came in (task cancellation ends a real sleep at once), not the
        // next poll or the code's ten-minute lifetime.
        #expect(clock.monotonicNow() == .seconds(2))
        #expect(endpoint.count == 2)
        #expect(delegate.events.last == "didFail(The sign-in was cancelled.)")
        #expect(try store.identifiers().isEmpty)
    }

    @Test func deviceGrantNeedsTheEndpoint() async {
        var plain = server
        plain.deviceAuthorizationEndpoint = nil
        let coordinator = OAuthCoordinator(
            configuration: .init(server: plain, client: ClientConfiguration(clientId: "cli"), browserLauncher: nil),
            delegate: nil, httpClient: FakeHTTPClient(), store: store)
        await #expect {
            try await coordinator.authenticate(using: .deviceCode)
        } throws: { error in
            "\(error)".contains("no device authorization endpoint")
        }
    }

    @Test func clientCredentialsNeedASecretAndMakeAServiceAccount() async throws {
        let delegate = Recorder(store: store)
        await #expect {
            try await coordinator(FakeHTTPClient(), delegate: delegate).authenticate(using: .clientCredentials)
        } throws: { error in
            "\(error)".contains("needs the client's secret")
        }
        let endpoint = FakeHTTPClient(replies: [.json(200, #"{"access_token":"svc-at","expires_in":300}"#)])
        let credentials = try await coordinator(endpoint, client: ClientConfiguration(clientId: "svc", clientSecret: "x"), delegate: delegate)
            .authenticate(using: .clientCredentials)
        #expect(credentials.identifier == "idp.example/client:svc")
        #expect(credentials.obtainedBy == .clientCredentials)
        #expect(endpoint.requests.first?.bodyText == "grant_type=client_credentials&client_id=svc&client_secret=x")
    }

    @Test func passwordGrantFailureKeepsWhatWasStored() async throws {
        let delegate = Recorder(store: store)
        _ = try await coordinator(FakeHTTPClient(replies: [.json(200, #"{"access_token":"first","refresh_token":"rt"}"#)]), delegate: delegate)
            .authenticate(using: .password(username: "alice", password: "right"))
        let before = try store.loadDefault()
        let rejected = FakeHTTPClient(replies: [.json(400, #"{"error":"invalid_grant","error_description":"Invalid credentials given."}"#)])
        await #expect(
            throws: OAuthError.tokenRequestRejected(
                OAuthServerError(code: "invalid_grant", description: "Invalid credentials given.", httpStatus: 400))
        ) {
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

        let endpoint = FakeHTTPClient(replies: [.json(200, #"{"access_token":"jwt-at"}"#)])
        let delegate = Recorder(store: store)
        // jwt-kit checks the assertion's expiry against the real time of day.
        let credentials = try await coordinator(endpoint, delegate: delegate, clock: TestClock(now: Date()))
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
    static let rsaPrivateKeyPEM = try! String(
        contentsOfFile: #filePath.replacingOccurrences(of: "GrantCoordinatorTests.swift", with: "Fixtures/jwt-test-rsa.pem"), encoding: .utf8)
}
