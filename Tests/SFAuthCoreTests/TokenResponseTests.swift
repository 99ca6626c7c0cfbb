import FoundationEssentials
import Testing

@testable import SFAuthCore

@Suite struct TokenResponseTests {
    let endpoint = "https://auth.example.com/token"

    func response(_ status: Int, _ body: String, type: String? = "application/json") -> HTTPResponse {
        HTTPResponse(status: status, headers: type.map { ["content-type": $0] } ?? [:], body: Array(body.utf8))
    }

    @Test func standardResponse() throws {
        let token = try TokenResponse.decode(
            response(
                200,
                """
                {"access_token":"at","token_type":"bearer","expires_in":3600,"refresh_token":"rt","scope":"openid api","id_token":"a.b.c"}
                """), endpoint: endpoint)
        #expect(
            token
                == TokenResponse(
                    accessToken: "at", tokenType: "bearer", expiresIn: 3600, refreshToken: "rt",
                    scopes: ["openid", "api"], idToken: "a.b.c"))
    }

    @Test func salesforceResponseWithoutExpiresIn() throws {
        let token = try TokenResponse.decode(
            response(
                200,
                """
                {"access_token":"00Dxx!AQ0A","signature":"c2ln","scope":"refresh_token api web","instance_url":"https://acme.my.salesforce.com",\
                "id":"https://login.salesforce.com/id/00D000000000001EAA/005000000000001AAA","token_type":"Bearer","issued_at":"1700000000123",\
                "refresh_token":"5Aep861"}
                """), endpoint: endpoint)
        #expect(token.expiresIn == nil)
        #expect(token.instanceURL == "https://acme.my.salesforce.com")
        #expect(token.issuedAt == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(token.signature == "c2ln")
        let identityURL = try #require(token.identityURL)
        let ids = try #require(Salesforce.identity(fromIdentityURL: identityURL))
        #expect(ids.organizationId == "00D000000000001EAA")
        #expect(ids.userId == "005000000000001AAA")
    }

    @Test(arguments: [("\"3600\"", 3600.0), ("3600.0", 3600.0), ("\" 60 \"", 60.0), ("0", 0.0), ("null", nil)])
    func liberalExpiresIn(raw: String, expected: Double?) throws {
        let token = try TokenResponse.decode(response(200, "{\"access_token\":\"a\",\"expires_in\":\(raw)}"), endpoint: endpoint)
        #expect(token.expiresIn == expected)
        #expect(token.tokenType == "Bearer")
    }

    @Test(arguments: ["\"soon\"", "-5", "true", "{}"])
    func unusableExpiresInIsAnError(raw: String) {
        #expect(throws: OAuthError.self) {
            try TokenResponse.decode(response(200, "{\"access_token\":\"a\",\"expires_in\":\(raw)}"), endpoint: endpoint)
        }
    }

    @Test func errorBodyIsKeptVerbatim() {
        #expect(
            throws: OAuthError.tokenRequestRejected(
                OAuthServerError(
                    code: "invalid_grant", description: "expired access/refresh token", httpStatus: 400))
        ) {
            try TokenResponse.decode(
                response(400, #"{"error":"invalid_grant","error_description":"expired access/refresh token"}"#),
                endpoint: endpoint)
        }
    }

    @Test func formEncodedErrorBody() {
        #expect(
            throws: OAuthError.tokenRequestRejected(
                OAuthServerError(
                    code: "unsupported_token_type", description: "this token type is not supported", httpStatus: 400))
        ) {
            try TokenResponse.decode(
                response(
                    400, "error=unsupported_token_type&error_description=this+token+type+is+not+supported",
                    type: "application/x-www-form-urlencoded"), endpoint: endpoint)
        }
    }

    /// GitHub answers token-endpoint errors with HTTP 200 (docs.github.com, "Troubleshooting OAuth
    /// app access token request errors"; the device flow's `authorization_pending` too): an error
    /// member makes any answer an error, in JSON and in form encoding.
    @Test(arguments: [
        (
            #"{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired.","error_uri":"https://docs.github.com/x"}"#,
            "application/json"
        ),
        (
            "error=bad_verification_code&error_description=The+code+passed+is+incorrect+or+expired.&error_uri=https%3A%2F%2Fdocs.github.com%2Fx",
            "application/x-www-form-urlencoded"
        ),
    ])
    func anErrorMemberInA200AnswerIsThatError(body: String, type: String) {
        #expect(
            throws: OAuthError.tokenRequestRejected(
                OAuthServerError(
                    code: "bad_verification_code", description: "The code passed is incorrect or expired.",
                    uri: "https://docs.github.com/x", httpStatus: 200))
        ) { try TokenResponse.decode(response(200, body, type: type), endpoint: endpoint) }
    }

    @Test func aFormEncodedAnswerIsReadLikeJSON() throws {
        // GitHub without `Accept: application/json`: form-encoded, every value a string.
        let body =
            "access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&expires_in=28800&refresh_token=ghr_1B4a&refresh_token_expires_in=15897600&scope=&token_type=bearer"
        let token = try TokenResponse.decode(response(200, body, type: "application/x-www-form-urlencoded"), endpoint: endpoint)
        #expect(token.accessToken == "gho_16C7e42F292c6912E7710c838347Ae178B4a")
        #expect(token.expiresIn == 28800)
        #expect(token.refreshToken == "ghr_1B4a")
        #expect(TokenResponse.rotatedRefreshToken(in: response(200, body, type: "application/x-www-form-urlencoded")) == "ghr_1B4a")
    }

    @Test(arguments: ["invalid_grant", "bad_refresh_token", "bad_verification_code"])
    func grantRejectionsByAnyName(code: String) {
        #expect(OAuthServerError(code: code).rejectsTheGrant)
        #expect(!OAuthServerError(code: "invalid_client").rejectsTheGrant)
    }

    @Test func htmlErrorPageIsDescribedByTitle() {
        let error = #expect(throws: OAuthError.self) {
            try TokenResponse.decode(
                response(
                    502, "<html><head><title>502 Bad\n Gateway</title></head><body>x</body></html>",
                    type: "text/html"), endpoint: endpoint)
        }
        #expect(error == .invalidServerResponse("the token endpoint \(endpoint) answered HTTP 502 with an HTML page (title: 502 Bad Gateway)"))
        #expect(error?.recovery == .retryLater)
    }

    @Test func successStatusWithNonJSONBody() {
        let error = #expect(throws: OAuthError.self) {
            try TokenResponse.decode(response(200, "access_token=x", type: "text/plain"), endpoint: endpoint)
        }
        #expect(
            error
                == .invalidServerResponse(
                    "the token endpoint \(endpoint) answered HTTP 200 with a text/plain body of 14 bytes instead of a JSON object"))
    }

    @Test(arguments: ["{}", #"{"access_token":""}"#, #"{"access_token":"a","token_type":"mac"}"#, "[]", ""])
    func incompleteSuccessIsAnError(body: String) {
        #expect(throws: OAuthError.self) { try TokenResponse.decode(response(200, body), endpoint: endpoint) }
    }

    @Test func serverErrorWithoutBody() {
        #expect(throws: OAuthError.invalidServerResponse("the token endpoint \(endpoint) answered HTTP 503 with an empty body")) {
            try TokenResponse.decode(response(503, "", type: nil), endpoint: endpoint)
        }
    }

    @Test func exactAuthorizationCodeForm() {
        let request = AuthorizationRequest(
            server: AuthorizationServer(authorizationEndpoint: "https://a/authorize", tokenEndpoint: "https://a/token"),
            client: ClientConfiguration(clientId: "PlatformCLI"), redirectURI: "http://localhost:1717/OauthRedirect",
            state: "s", pkce: PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), nonce: nil)
        let http = TokenRequest.authorizationCode(AuthorizationResponse(code: "aPrx==", state: "s"), for: request)
        #expect(http.method == "POST")
        #expect(http.url == "https://a/token")
        #expect(http.headers.map(\.name) == ["Content-Type", "Accept"])
        #expect(http.headers[0].value == "application/x-www-form-urlencoded")
        #expect(
            http.bodyText == "grant_type=authorization_code&code=aPrx%3D%3D&redirect_uri=http%3A%2F%2Flocalhost%3A1717%2FOauthRedirect"
                + "&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&client_id=PlatformCLI")
    }

    @Test func exactRefreshFormWithSecret() {
        let http = TokenRequest.refresh(
            refreshToken: "r/t+1", tokenEndpoint: "https://a/token",
            client: ClientConfiguration(clientId: "c", clientSecret: "s&cret"))
        #expect(http.bodyText == "grant_type=refresh_token&refresh_token=r%2Ft%2B1&client_id=c&client_secret=s%26cret")
    }

    @Test func credentialsFromOpenIDResponse() throws {
        // {"sub":"42","preferred_username":"alice","nonce":"n"}
        let payload = Base64URL.encode(Array(#"{"sub":"42","preferred_username":"alice","nonce":"n"}"#.utf8))
        let server = AuthorizationServer(
            authorizationEndpoint: "http://127.0.0.1:8000/o/authorize/",
            tokenEndpoint: "http://127.0.0.1:8000/o/token/")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "c", scopes: ["openid"]),
            redirectURI: "http://127.0.0.1:1/cb", state: "s", pkce: PKCE(verifier: "v"), nonce: "n")
        let now = Date(timeIntervalSince1970: 1_000)
        let credentials = OAuthCredentials(
            response: TokenResponse(accessToken: "a", expiresIn: 60, refreshToken: "r", idToken: "h.\(payload).s"),
            request: request, now: now)
        #expect(credentials.identifier == "127.0.0.1:8000/42")
        #expect(credentials.username == "alice")
        #expect(credentials.expiresAt == Date(timeIntervalSince1970: 1_060))
        #expect(credentials.scopes == ["openid"])
        #expect(!credentials.isExpired(at: now, leeway: 60))  // the leeway is at most half its 60 s lifetime
        #expect(credentials.isExpired(at: now.addingTimeInterval(30), leeway: 60))
    }

    @Test func accountIdentifierWithoutUser() {
        let server = Salesforce.server(loginHost: Salesforce.productionLoginHost)
        #expect(
            AccountIdentifier.make(server: server, userId: nil, clientId: "PlatformCLI", obtainedBy: .clientCredentials)
                == "login.salesforce.com/client:PlatformCLI")
        #expect(
            AccountIdentifier.make(server: server, userId: nil, clientId: "PlatformCLI", obtainedBy: .browser)
                == "login.salesforce.com/unidentified")
        let ipv6 = AuthorizationServer(authorizationEndpoint: "http://[::1]:9/a", tokenEndpoint: "http://[::1]:9/t")
        #expect(AccountIdentifier.make(server: ipv6, userId: "u", clientId: "c") == "[::1]:9/u")
    }

    @Test func errorsSayWhatToDo() {
        #expect(OAuthError.authorizationDenied(OAuthServerError(code: "access_denied")).recovery == .cancelledByUser)
        #expect(OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant")).recovery == .serverRefused)
        #expect(OAuthError.network("x").recovery == .retryLater)
        #expect(OAuthError.loginRequired("x").recovery == .logInAgain)
        #expect(!OAuthError.cancelled.description.contains("\n"))
    }
}

@Suite struct CredentialDatesTests {
    @Test func fractionalTimesBecomeWholeSecondsRoundedDown() {
        let server = AuthorizationServer(authorizationEndpoint: "https://a/authorize", tokenEndpoint: "https://a/token")
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "c"), redirectURI: "http://127.0.0.1:1/cb",
            state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        let credentials = OAuthCredentials(
            response: TokenResponse(accessToken: "a", expiresIn: 59.9), request: request,
            now: Date(timeIntervalSince1970: 1_000.7))
        #expect(credentials.issuedAt == Date(timeIntervalSince1970: 1_000))
        #expect(credentials.expiresAt == Date(timeIntervalSince1970: 1_060))
    }
}
