import Foundation
import Testing

@testable import SFAuthCore

/// RFC 7009 revocation requests as exact HTTP values, and every answer shape a revocation endpoint
/// gives (django-oauth-toolkit, Salesforce, proxies in front of them).
@Suite struct RevocationTests {
    let endpoint = "https://login.salesforce.com/services/oauth2/revoke"

    func response(
        _ status: Int, _ body: String, type: String? = "application/json",
        headers: [String: String] = [:]
    ) -> HTTPResponse {
        var all = headers
        if let type { all["content-type"] = type }
        return HTTPResponse(status: status, headers: all, body: Array(body.utf8))
    }

    // MARK: - Requests

    @Test func refreshTokenRequestIsAnExactFormPost() {
        let request = RevocationRequest.make(
            token: "5Aep861.Ab/c+d=", tokenTypeHint: .refreshToken, endpoint: endpoint,
            client: ClientConfiguration(clientId: "PlatformCLI"))
        #expect(request.method == "POST")
        #expect(request.url == endpoint)
        #expect(request.bodyText == "token=5Aep861.Ab%2Fc%2Bd%3D&token_type_hint=refresh_token&client_id=PlatformCLI")
        #expect(
            request.headers.map { "\($0.name): \($0.value)" }
                == ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"])
    }

    @Test func headersAreTheTokenRequestHeaders() {
        let client = ClientConfiguration(clientId: "c")
        let revoke = RevocationRequest.make(token: "t", tokenTypeHint: .accessToken, endpoint: endpoint, client: client)
        let refresh = TokenRequest.refresh(refreshToken: "t", tokenEndpoint: endpoint, client: client)
        #expect(revoke.headers.map { "\($0.name): \($0.value)" } == refresh.headers.map { "\($0.name): \($0.value)" })
    }

    @Test func accessTokenWithoutHintAndConfidentialClient() {
        let noHint = RevocationRequest.make(
            token: "00Dxx!AQ0AQ", tokenTypeHint: nil, endpoint: endpoint,
            client: ClientConfiguration(clientId: "sfauth-public"))
        #expect(noHint.bodyText == "token=00Dxx%21AQ0AQ&client_id=sfauth-public")

        let confidential = RevocationRequest.make(
            token: "at", tokenTypeHint: .accessToken, endpoint: endpoint,
            client: ClientConfiguration(clientId: "sfauth-confidential", clientSecret: "s e/cret"))
        #expect(confidential.bodyText == "token=at&token_type_hint=access_token&client_id=sfauth-confidential&client_secret=s%20e%2Fcret")
    }

    @Test func hintValuesAreTheRegisteredOnes() {
        #expect(TokenTypeHint.accessToken.rawValue == "access_token")
        #expect(TokenTypeHint.refreshToken.rawValue == "refresh_token")
    }

    // MARK: - Answers

    @Test func okMeansRevoked() throws {
        // django-oauth-toolkit: 200, an empty body typed text/html.
        #expect(try RevocationOutcome.interpret(response(200, "", type: "text/html; charset=utf-8"), endpoint: endpoint) == .revoked)
        // Salesforce: 200, empty.
        #expect(try RevocationOutcome.interpret(response(200, "", type: nil), endpoint: endpoint) == .revoked)
        #expect(try RevocationOutcome.interpret(response(200, "{}"), endpoint: endpoint) == .revoked)
        #expect(try RevocationOutcome.interpret(response(204, "", type: nil), endpoint: endpoint) == .revoked)
    }

    @Test func salesforceFormEncoded400IsAlreadyInvalid() throws {
        let body = "error=unsupported_token_type&error_description=this%20token%20type%20is%20not%20supported"
        let expected = RevocationOutcome.alreadyInvalid(
            OAuthServerError(
                code: "unsupported_token_type", description: "this token type is not supported", httpStatus: 400))
        #expect(
            try RevocationOutcome.interpret(
                response(400, body, type: "application/x-www-form-urlencoded;charset=UTF-8"),
                endpoint: endpoint) == expected)
        // The same body with another content type, or none, or a trailing newline, is read the same way.
        #expect(try RevocationOutcome.interpret(response(400, body, type: "text/plain"), endpoint: endpoint) == expected)
        #expect(try RevocationOutcome.interpret(response(400, body + "\r\n", type: nil), endpoint: endpoint) == expected)

        let invalid = try RevocationOutcome.interpret(
            response(400, "error=invalid_token&error_description=invalid+token", type: "application/x-www-form-urlencoded"),
            endpoint: endpoint)
        #expect(invalid == .alreadyInvalid(OAuthServerError(code: "invalid_token", description: "invalid token", httpStatus: 400)))
    }

    @Test func json400InvalidTokenIsAlreadyInvalid() throws {
        let outcome = try RevocationOutcome.interpret(response(400, #"{"error":"invalid_token"}"#), endpoint: endpoint)
        #expect(outcome == .alreadyInvalid(OAuthServerError(code: "invalid_token", httpStatus: 400)))
    }

    @Test func invalidClient401IsARejection() {
        let error = #expect(throws: OAuthError.self) {
            try RevocationOutcome.interpret(
                response(
                    401, #"{"error": "invalid_client"}"#,
                    headers: ["www-authenticate": #"Bearer error="invalid_client""#]),
                endpoint: endpoint)
        }
        #expect(error == .tokenRequestRejected(OAuthServerError(code: "invalid_client", httpStatus: 401)))
        #expect(error?.recovery == .serverRefused)
    }

    @Test func otherClientErrorsAreRejections() {
        let error = #expect(throws: OAuthError.self) {
            try RevocationOutcome.interpret(
                response(400, #"{"error":"invalid_request","error_description":"token missing"}"#),
                endpoint: endpoint)
        }
        #expect(error == .tokenRequestRejected(OAuthServerError(code: "invalid_request", description: "token missing", httpStatus: 400)))
    }

    @Test func unavailable503IsRetryable() {
        let error = #expect(throws: OAuthError.self) {
            try RevocationOutcome.interpret(response(503, "", type: nil, headers: ["retry-after": "120"]), endpoint: endpoint)
        }
        guard case .invalidServerResponse(let message)? = error else {
            Issue.record("expected invalidServerResponse, got \(String(describing: error))")
            return
        }
        #expect(
            message
                == Problem(
                    "the revocation endpoint \(endpoint) is temporarily unavailable (HTTP 503) (Retry-After: 120); the token may still be valid",
                    remedy: .tryAgainLater))
        #expect(error?.recovery == .retryLater)
    }

    @Test func htmlBadGatewayIsRetryable() {
        let html = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"
        let error = #expect(throws: OAuthError.self) {
            try RevocationOutcome.interpret(response(502, html, type: "text/html"), endpoint: endpoint)
        }
        #expect(error == .invalidServerResponse("the revocation endpoint \(endpoint) answered HTTP 502 with an HTML page (title: 502 Bad Gateway)"))
        #expect(error?.recovery == .retryLater)
    }

    @Test(arguments: [
        (500, #"{"error":"server_error"}"#, "application/json"),
        (400, "", "text/html"),
        (404, "<html><title>Not Found</title></html>", "text/html"),
        (302, "", "text/html"),
        (400, "error=<script>", "text/html"),
    ])
    func unusableAnswersAreInvalidServerResponses(status: Int, body: String, type: String) {
        let error = #expect(throws: OAuthError.self) {
            try RevocationOutcome.interpret(response(status, body, type: type), endpoint: endpoint)
        }
        guard case .invalidServerResponse(let message)? = error else {
            Issue.record("expected invalidServerResponse, got \(String(describing: error))")
            return
        }
        #expect(message.text.contains("HTTP \(status)"))
    }

    // MARK: - Reports

    let salesforce = "https://login.salesforce.com/services/oauth2/revoke"

    @Test func summaryWhenTheRefreshTokenWasRevoked() {
        // Salesforce: revoking the refresh token ends its access token, which then counts as invalid.
        let report = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .refreshToken, status: .revoked),
                .init(token: .accessToken, status: .alreadyInvalid(OAuthServerError(code: "invalid_token", httpStatus: 400))),
            ])
        #expect(report.summary == "revoked the refresh token at login.salesforce.com")
        #expect(report.isRevokedAtServer)
        #expect(report.serverName == "login.salesforce.com")
        #expect(report.status(of: .accessToken)?.isEnded == true)

        let both = RevocationReport(
            endpoint: "http://127.0.0.1:8000/o/revoke_token/",
            entries: [
                .init(token: .refreshToken, status: .revoked), .init(token: .accessToken, status: .revoked),
            ])
        #expect(both.summary == "revoked the refresh token and the access token at 127.0.0.1:8000")

        let accessOnly = RevocationReport(endpoint: salesforce, entries: [.init(token: .accessToken, status: .revoked)])
        #expect(accessOnly.summary == "revoked the access token at login.salesforce.com")
        #expect(accessOnly.isRevokedAtServer)
    }

    @Test func summaryWhenAlreadyInvalid() {
        let report = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .refreshToken, status: .alreadyInvalid(OAuthServerError(code: "unsupported_token_type", httpStatus: 400))),
                .init(token: .accessToken, status: .alreadyInvalid(nil)),
            ])
        #expect(
            report.summary == "login.salesforce.com reports the refresh token was already invalid (unsupported_token_type); nothing is left to revoke"
        )
        #expect(report.isRevokedAtServer)
    }

    @Test func summaryWhenUnreachable() {
        let report = RevocationReport(
            endpoint: "https://idp.example/oauth/revoke",
            entries: [
                .init(token: .refreshToken, status: .failed(.network("could not connect to idp.example:443: Connection refused"))),
                .init(token: .accessToken, status: .notAttempted),
            ])
        #expect(
            report.summary
                == "could not reach idp.example to revoke the tokens (could not connect to idp.example:443: Connection refused); they were only forgotten locally"
        )
        #expect(!report.isRevokedAtServer)
    }

    @Test func summaryWhenTheRefreshTokenCouldNotBeRead() {
        // The keyring did not answer: the refresh token is not revoked, and the line says so.
        let report = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .refreshToken, status: .failed(.storage("the keyring did not answer within 3 s"))),
                .init(token: .accessToken, status: .revoked),
            ])
        #expect(
            report.summary == "the refresh token could not be read (the keyring did not answer within 3 s), so it was not revoked "
                + "at login.salesforce.com; the access token was revoked")
        #expect(!report.isRevokedAtServer)
    }

    @Test func summaryWithoutAnEndpoint() {
        let report = RevocationReport(endpoint: nil, entries: [])
        #expect(report.summary == "the server has no revocation endpoint; the tokens were only forgotten locally")
        #expect(!report.isRevokedAtServer)
    }

    @Test func summaryWhenRefusedCancelledOrBroken() {
        let refused = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .refreshToken, status: .failed(.tokenRequestRejected(OAuthServerError(code: "invalid_client", httpStatus: 401)))),
                .init(token: .accessToken, status: .revoked),
            ])
        #expect(
            refused.summary
                == "login.salesforce.com refused to revoke the refresh token (HTTP 401, invalid_client); it was only forgotten locally; the access token was revoked"
        )
        #expect(!refused.isRevokedAtServer)

        let cancelled = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .refreshToken, status: .failed(.cancelled)), .init(token: .accessToken, status: .notAttempted),
            ])
        #expect(cancelled.summary == "revocation at login.salesforce.com was cancelled; the tokens were only forgotten locally")

        let broken = RevocationReport(
            endpoint: salesforce,
            entries: [
                .init(token: .accessToken, status: .failed(.invalidServerResponse("HTTP 503")))
            ])
        #expect(broken.summary == "login.salesforce.com did not revoke the access token (HTTP 503); it was only forgotten locally")

        let insecure = RevocationReport(
            endpoint: "http://idp.example/revoke",
            entries: [
                .init(token: .refreshToken, status: .failed(.configuration("plain http")))
            ])
        #expect(insecure.summary == "the revocation endpoint cannot be used (plain http); the tokens were only forgotten locally")

        let ipv6 = RevocationReport(endpoint: "http://[::1]:9/revoke", entries: [])
        #expect(ipv6.summary == "there were no tokens to revoke at [::1]:9")
    }
}
