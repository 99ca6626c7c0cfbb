import Foundation
import SFAuthCore
import Testing

/// The grants without a browser as exact HTTP values, and the device grant's polling rules (RFC 8628 §3.5).
@Suite struct GrantRequestTests {
    let client = ClientConfiguration(clientId: "cli", scopes: ["openid", "api"])
    let confidential = ClientConfiguration(clientId: "svc", clientSecret: "s3cret", scopes: ["read"])

    @Test func clientCredentialsSendsTheSecretAndScope() {
        let request = TokenRequest.clientCredentials(tokenEndpoint: "https://idp.example/token", client: confidential)
        #expect(request.method == "POST")
        #expect(request.url == "https://idp.example/token")
        #expect(request.bodyText == "grant_type=client_credentials&scope=read&client_id=svc&client_secret=s3cret")
    }

    @Test func passwordGrantEncodesTheCredentials() {
        let request = TokenRequest.password(
            username: "alice@example.test", password: "p&ss w=rd", tokenEndpoint: "https://idp.example/token", client: client)
        #expect(request.bodyText == "grant_type=password&username=alice%40example.test&password=p%26ss%20w%3Drd&scope=openid%20api&client_id=cli")
    }

    @Test func jwtBearerNamesTheClientOnlyThroughTheAssertion() {
        let request = TokenRequest.jwtBearer(assertion: "h.p.s", tokenEndpoint: "https://idp.example/token", client: client)
        #expect(request.bodyText == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=h.p.s&scope=openid%20api")
        // With a secret the client authenticates as well (RFC 7523 §3.1 allows both).
        let withSecret = TokenRequest.jwtBearer(assertion: "h.p.s", tokenEndpoint: "https://idp.example/token", client: confidential)
        #expect(withSecret.bodyText.hasSuffix("&client_id=svc&client_secret=s3cret"))
    }

    @Test func deviceAuthorizationRequestAndPoll() {
        let request = DeviceAuthorization.request(endpoint: "https://idp.example/device", client: client)
        #expect(request.url == "https://idp.example/device")
        #expect(request.bodyText == "scope=openid%20api&client_id=cli")
        let polling = DevicePolling(
            DeviceAuthorization(deviceCode: "dev-code", userCode: "ABCD", verificationURI: "https://idp.example/activate", expiresIn: 600))
        #expect(
            polling.tokenRequest(tokenEndpoint: "https://idp.example/token", client: client).bodyText
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=dev-code&client_id=cli")
    }

    @Test func deviceAuthorizationResponseIsRead() throws {
        let authorization = try DeviceAuthorization.decode(
            json(
                200,
                """
                {"device_code":"dc","user_code":"WDJB-MJHT","verification_uri":"https://idp.example/device",
                 "verification_uri_complete":"https://idp.example/device?user_code=WDJB-MJHT","expires_in":"1800"}
                """), endpoint: "https://idp.example/device_authorization")
        #expect(
            authorization
                == DeviceAuthorization(
                    deviceCode: "dc", userCode: "WDJB-MJHT", verificationURI: "https://idp.example/device",
                    verificationURIComplete: "https://idp.example/device?user_code=WDJB-MJHT",
                    expiresIn: 1800, interval: 5))
        // Google's older name for the page.
        let google = try DeviceAuthorization.decode(
            json(200, #"{"device_code":"d","user_code":"u","verification_url":"https://www.google.com/device","expires_in":60,"interval":2}"#),
            endpoint: "e")
        #expect(google.verificationURI == "https://www.google.com/device")
        #expect(google.interval == 2)
    }

    @Test(arguments: [
        (#"{"device_code":"d","user_code":"u","expires_in":60}"#, "lacks device_code, user_code or verification_uri"),
        (#"{"device_code":"d","user_code":"u","verification_uri":"http://idp.example/device","expires_in":60}"#, "uses plain http"),
        (#"{"device_code":"d","user_code":"u","verification_uri":"https://idp.example/device"}"#, "no expires_in of at least one second"),
    ])
    func unusableDeviceAuthorizationResponses(body: String, expected: String) {
        #expect {
            try DeviceAuthorization.decode(json(200, body), endpoint: "https://idp.example/device_authorization")
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func deviceAuthorizationErrorIsTheServers() {
        #expect(
            throws: OAuthError.tokenRequestRejected(OAuthServerError(code: "unauthorized_client", description: "no device grant", httpStatus: 400))
        ) {
            try DeviceAuthorization.decode(json(400, #"{"error":"unauthorized_client","error_description":"no device grant"}"#), endpoint: "e")
        }
    }

    @Test func pollingFollowsRFC8628() throws {
        var polling = DevicePolling(
            DeviceAuthorization(
                deviceCode: "d", userCode: "ABCD-EFGH", verificationURI: "https://idp.example/device",
                expiresIn: 600, interval: 2))
        #expect(try polling.next(after: json(400, #"{"error":"authorization_pending"}"#), endpoint: "e") == .wait(seconds: 2))
        // slow_down: the interval grows by 5 seconds, for this and every later poll (§3.5).
        #expect(try polling.next(after: json(400, #"{"error":"slow_down"}"#), endpoint: "e") == .wait(seconds: 7))
        #expect(try polling.next(after: json(400, #"{"error":"authorization_pending"}"#), endpoint: "e") == .wait(seconds: 7))
        #expect(try polling.next(after: json(400, #"{"error":"slow_down"}"#), endpoint: "e") == .wait(seconds: 12))
        #expect(
            try polling.next(after: json(200, #"{"access_token":"at","expires_in":60}"#), endpoint: "e")
                == .granted(TokenResponse(accessToken: "at", expiresIn: 60)))
    }

    @Test func pollingStopsOnDenialExpiryAndOtherErrors() {
        var polling = DevicePolling(
            DeviceAuthorization(deviceCode: "d", userCode: "ABCD-EFGH", verificationURI: "https://idp.example/device", expiresIn: 600))
        #expect(throws: OAuthError.authorizationDenied(OAuthServerError(code: "access_denied", httpStatus: 400))) {
            try polling.next(after: json(400, #"{"error":"access_denied"}"#), endpoint: "e")
        }
        #expect {
            try polling.next(after: json(400, #"{"error":"expired_token"}"#), endpoint: "e")
        } throws: { error in
            guard case OAuthError.timedOut(600, let hint) = error else { return false }
            return hint.text.contains("ABCD-EFGH") && hint.text.contains("expired")
        }
        #expect(throws: OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant", httpStatus: 400))) {
            try polling.next(after: json(400, #"{"error":"invalid_grant"}"#), endpoint: "e")
        }
    }

    @Test func jwtAssertionClaimsAndAudiences() {
        var random = SystemRandomNumberGenerator()
        let now = Date(timeIntervalSince1970: 1_700_000_000.7)
        let assertion = JWTBearerAssertion(
            clientId: "3MVG9", username: "ci@acme.test", audience: "https://login.salesforce.com", now: now, using: &random)
        #expect(assertion.issuer == "3MVG9")
        #expect(assertion.subject == "ci@acme.test")
        #expect(assertion.issuedAt == 1_700_000_000)
        #expect(assertion.expiresAt == 1_700_000_180)
        #expect(assertion.jwtID.count >= 43)  // 256 random bits, base64url
        #expect(JWTBearerAssertion(clientId: "c", username: "u", audience: "a", now: now, using: &random).jwtID != assertion.jwtID)

        #expect(JWTBearerAssertion.defaultAudience(for: Salesforce.server(loginHost: "login.salesforce.com")) == "https://login.salesforce.com")
        #expect(JWTBearerAssertion.defaultAudience(for: Salesforce.server(loginHost: "test.salesforce.com")) == "https://test.salesforce.com")
        #expect(
            JWTBearerAssertion.defaultAudience(for: Salesforce.server(loginHost: "https://acme.my.salesforce.com")) == "https://login.salesforce.com")
        #expect(
            JWTBearerAssertion.defaultAudience(for: Salesforce.server(loginHost: "https://acme--dev.sandbox.my.salesforce.com"))
                == "https://test.salesforce.com")
        var oidc = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
        #expect(JWTBearerAssertion.defaultAudience(for: oidc) == "https://idp.example/t")
        oidc.issuer = "https://idp.example"
        #expect(JWTBearerAssertion.defaultAudience(for: oidc) == "https://idp.example")
    }

    @Test func grantCredentialsNameTheUserWhenTheServerDoesNot() {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example:8443/t")
        let user = OAuthCredentials(
            response: TokenResponse(accessToken: "at"), server: server, client: client, obtainedBy: .password,
            username: "alice", now: Date(timeIntervalSince1970: 0))
        #expect(user.identifier == "idp.example:8443/user:alice")
        #expect(user.username == "alice")
        #expect(user.obtainedBy == .password)
        #expect(user.redirectURI == "")
        let service = OAuthCredentials(
            response: TokenResponse(accessToken: "at"), server: server, client: confidential, obtainedBy: .clientCredentials,
            now: Date(timeIntervalSince1970: 0))
        #expect(service.identifier == "idp.example:8443/client:svc")
    }

    private func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(body.utf8))
    }
}
