import Foundation
import Testing

@testable import SFAuthCore

/// Who-is-signed-in answers: OpenID Connect userinfo, Salesforce's identity URL and userinfo, and
/// the ways those endpoints refuse a token.
@Suite struct UserIdentityTests {
    func response(
        _ status: Int, _ body: String, type: String? = "application/json",
        headers: [String: String] = [:]
    ) -> HTTPResponse {
        var all = headers
        if let type { all["content-type"] = type }
        return HTTPResponse(status: status, headers: all, body: Array(body.utf8))
    }

    // Shaped like Salesforce's identity URL response (GET https://login.salesforce.com/id/<org>/<user>).
    static let salesforceIdentityURLBody = """
        {"id":"https://login.salesforce.com/id/00D5g000004ExAmEAK/0055g00000AbCdEAAV","asserted_user":true,\
        "user_id":"0055g00000AbCdEAAV","organization_id":"00D5g000004ExAmEAK","username":"alan.van@acme.example",\
        "nick_name":"alan.van","display_name":"Alan Van","email":"alan.van@acme.example","email_verified":true,\
        "first_name":"Alan","last_name":"Van","timezone":"America/Los_Angeles",\
        "photos":{"picture":"https://acme.file.force.com/profilephoto/005/F","thumbnail":"https://acme.file.force.com/profilephoto/005/T"},\
        "addr_street":null,"addr_city":null,"addr_state":null,"addr_country":"US","addr_zip":null,\
        "mobile_phone":null,"mobile_phone_verified":false,"is_lightning_login_user":false,\
        "status":{"created_date":null,"body":null},\
        "urls":{"enterprise":"https://acme.my.salesforce.com/services/Soap/c/{version}/00D5g000004ExAm",\
        "rest":"https://acme.my.salesforce.com/services/data/v{version}/",\
        "sobjects":"https://acme.my.salesforce.com/services/data/v{version}/sobjects/",\
        "profile":"https://acme.my.salesforce.com/0055g00000AbCdEAAV"},\
        "active":true,"user_type":"STANDARD","language":"en_US","locale":"en_US","utcOffset":-28800000,\
        "last_modified_date":"2024-03-05T17:46:45Z","is_app_installed":true}
        """

    // Shaped like Salesforce's /services/oauth2/userinfo response: `sub` is the identity URL.
    static let salesforceUserinfoBody = """
        {"sub":"https://login.salesforce.com/id/00D5g000004ExAmEAK/0055g00000AbCdEAAV",\
        "user_id":"0055g00000AbCdEAAV","organization_id":"00D5g000004ExAmEAK",\
        "preferred_username":"alan.van@acme.example","nickname":"alan.van","name":"Alan Van",\
        "email":"alan.van@acme.example","email_verified":true,"given_name":"Alan","family_name":"Van",\
        "zoneinfo":"America/Los_Angeles","photos":{"picture":"https://acme.file.force.com/profilephoto/005/F"},\
        "profile":"https://acme.my.salesforce.com/0055g00000AbCdEAAV","picture":"https://acme.file.force.com/profilephoto/005/F",\
        "address":{"country":"US"},"urls":{"rest":"https://acme.my.salesforce.com/services/data/v{version}/"},\
        "active":true,"user_type":"STANDARD","language":"en_US","locale":"en_US","utcOffset":-28800000,\
        "updated_at":"2024-03-05T17:46:45Z","is_app_installed":true}
        """

    static let alan = UserIdentity(
        userId: "0055g00000AbCdEAAV", username: "alan.van@acme.example", displayName: "Alan Van",
        email: "alan.van@acme.example", organizationId: "00D5g000004ExAmEAK")

    // MARK: - Requests

    @Test func requestIsABearerGet() {
        let request = UserIdentity.request(endpoint: "https://login.salesforce.com/id/00D/005", accessToken: "00Dxx!AQ0A")
        #expect(
            request
                == HTTPRequest(
                    method: "GET", url: "https://login.salesforce.com/id/00D/005",
                    headers: [("Authorization", "Bearer 00Dxx!AQ0A"), ("Accept", "application/json")]))
        #expect(request.body.isEmpty)
    }

    // MARK: - Identities

    @Test func salesforceIdentityURL() throws {
        let identity = try UserIdentity.decode(
            response(200, Self.salesforceIdentityURLBody, type: "application/json;charset=UTF-8"),
            flavor: .salesforce)
        #expect(identity == Self.alan)
    }

    @Test func salesforceUserinfo() throws {
        let identity = try UserIdentity.decode(response(200, Self.salesforceUserinfoBody), flavor: .salesforce)
        #expect(identity == Self.alan)
    }

    @Test func salesforceIdsFromTheIdentityURLWhenTheFieldsAreMissing() throws {
        let identity = try UserIdentity.decode(
            response(
                200,
                """
                {"sub":"https://test.salesforce.com/id/00D000000000001EAA/005000000000001AAA","preferred_username":"u@x.example"}
                """), flavor: .salesforce)
        #expect(
            identity
                == UserIdentity(
                    userId: "005000000000001AAA", username: "u@x.example",
                    organizationId: "00D000000000001EAA"))
    }

    @Test func openIDConnectUserinfo() throws {
        // django-oauth-toolkit with the openid, profile and email scopes.
        let identity = try UserIdentity.decode(
            response(
                200,
                """
                {"sub": "1", "preferred_username": "alice", "name": "Alice Example", "given_name": "Alice", \
                "family_name": "Example", "email": "alice@example.test", "email_verified": true}
                """, type: "application/json"), flavor: .standard)
        #expect(identity == UserIdentity(userId: "1", username: "alice", displayName: "Alice Example", email: "alice@example.test"))

        // Only the openid scope: just `sub`, which may be a number at lenient servers.
        #expect(try UserIdentity.decode(response(200, #"{"sub": 1}"#), flavor: .standard) == UserIdentity(userId: "1"))

        // Names from given_name/family_name when `name` is missing; empty strings count as absent.
        let parts = try UserIdentity.decode(
            response(200, #"{"sub":"a","given_name":"Ada","family_name":"Lovelace","email":""}"#),
            flavor: .standard)
        #expect(parts == UserIdentity(userId: "a", displayName: "Ada Lovelace"))
    }

    @Test func standardFlavorIgnoresSalesforceFields() throws {
        // A standard server reads the OIDC names only: Salesforce's userinfo read as standard gives
        // the identity URL as `sub`.
        let identity = try UserIdentity.decode(response(200, Self.salesforceUserinfoBody), flavor: .standard)
        #expect(identity.userId == "https://login.salesforce.com/id/00D5g000004ExAmEAK/0055g00000AbCdEAAV")
        #expect(identity.username == "alan.van@acme.example")
        #expect(identity.organizationId == nil)
    }

    @Test func codableRoundTrip() throws {
        let data = try JSONEncoder().encode(Self.alan)
        #expect(try JSONDecoder().decode(UserIdentity.self, from: data) == Self.alan)
    }

    // MARK: - Refusals

    @Test func salesforce403BadOAuthTokenMeansTheTokenIsNoLongerAccepted() {
        for type in ["text/plain;charset=UTF-8", nil, "application/json"] as [String?] {
            let error = #expect(throws: OAuthError.self) {
                try UserIdentity.decode(response(403, "Bad_OAuth_Token", type: type), flavor: .salesforce)
            }
            #expect(
                error
                    == .loginRequired(
                        "The server no longer accepts the access token (HTTP 403: Bad_OAuth_Token): it has expired or was revoked. Refresh it, or sign in again."
                    ))
            #expect(error?.recovery == .logInAgain)
        }
    }

    @Test func bearer401MeansTheTokenIsNoLongerAccepted() {
        // django-oauth-toolkit's userinfo: the reason in the challenge, a JSON body typed text/html.
        let error = #expect(throws: OAuthError.self) {
            try UserIdentity.decode(
                response(
                    401,
                    #"{"error": "invalid_token", "error_description": "The access token provided is expired, revoked, malformed, or invalid for other reasons."}"#,
                    type: "text/html; charset=utf-8",
                    headers: [
                        "www-authenticate":
                            #"Bearer error="invalid_token", error_description="The access token provided is expired, revoked, malformed, or invalid for other reasons.""#
                    ]),
                flavor: .standard)
        }
        #expect(
            error
                == .loginRequired(
                    "The server no longer accepts the access token (HTTP 401: invalid_token: The access token provided is expired, revoked, malformed, or invalid for other reasons.): it has expired or was revoked. Refresh it, or sign in again."
                ))
    }

    @Test func salesforceRESTStyle401() {
        let error = #expect(throws: OAuthError.self) {
            try UserIdentity.decode(
                response(
                    401, #"[{"message":"Session expired or invalid","errorCode":"INVALID_SESSION_ID"}]"#,
                    headers: ["www-authenticate": "Token"]),
                flavor: .salesforce)
        }
        #expect(
            error
                == .loginRequired(
                    "The server no longer accepts the access token (HTTP 401: INVALID_SESSION_ID: Session expired or invalid): it has expired or was revoked. Refresh it, or sign in again."
                ))
    }

    @Test func bare401And403() {
        for status in [401, 403] {
            let error = #expect(throws: OAuthError.self) {
                try UserIdentity.decode(response(status, "<html><title>Forbidden</title></html>", type: "text/html"), flavor: .standard)
            }
            #expect(error?.recovery == .logInAgain)
            #expect(error.map { "\($0)" }?.contains("(HTTP \(status))") == true)
        }
    }

    @Test func insufficientScopeIsAConfigurationError() {
        let error = #expect(throws: OAuthError.self) {
            try UserIdentity.decode(
                response(
                    403, "", type: nil,
                    headers: ["www-authenticate": #"Bearer realm="x", error="insufficient_scope", scope="openid""#]),
                flavor: .standard)
        }
        guard case .configuration(let message)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        #expect(message.text.contains("insufficient_scope"))
        #expect(message.text.contains("'openid'"))
    }

    @Test(arguments: [
        (500, #"{"error":"server_error"}"#, "application/json"),
        (502, "<html><head><title>502 Bad Gateway</title></head></html>", "text/html"),
        (404, "Bad_Id", "text/plain"),
        (200, "<html><title>Login</title></html>", "text/html"),
        (200, #"["not", "an", "object"]"#, "application/json"),
        (200, #"{"name":"nobody"}"#, "application/json"),
        (200, "<?xml version=\"1.0\"?><user><user_id>005</user_id></user>", "application/xml"),
    ])
    func unusableAnswersAreInvalidServerResponses(status: Int, body: String, type: String) {
        for flavor in [AuthorizationServer.Flavor.standard, .salesforce] {
            let error = #expect(throws: OAuthError.self) {
                try UserIdentity.decode(response(status, body, type: type), flavor: flavor)
            }
            guard case .invalidServerResponse? = error else {
                Issue.record("expected invalidServerResponse for HTTP \(status), got \(String(describing: error))")
                continue
            }
            #expect(error?.recovery == .retryLater)
        }
    }

    // MARK: - Whose identity

    @Test func theIdentityMustBeTheTokensUser() throws {
        try Self.alan.requireUser("0055g00000AbCdEAAV", flavor: .salesforce)
        try Self.alan.requireUser(nil, flavor: .salesforce)
        try UserIdentity(userId: nil).requireUser("1", flavor: .standard)
        // Salesforce's 15-character form of the same id.
        try Self.alan.requireUser("0055g00000AbCdE", flavor: .salesforce)
        #expect(
            throws: OAuthError.invalidServerResponse(
                "the identity returned is user '0055g00000AbCdEAAV', but the tokens belong to user '005000000000001AAA'")
        ) {
            try Self.alan.requireUser("005000000000001AAA", flavor: .salesforce)
        }
        #expect(throws: OAuthError.self) { try UserIdentity(userId: "1").requireUser("2", flavor: .standard) }
        #expect(throws: OAuthError.self) { try UserIdentity(userId: "0055g00000AbCdE").requireUser("0055g00000AbCdEAAV", flavor: .standard) }
    }

    @Test func challengeParameters() {
        let parameters = UserIdentity.challengeParameters(
            #"Bearer realm="a, b", error="invalid_token", error_description="say \"hi\"", scope=openid"#)
        #expect(parameters == ["realm": "a, b", "error": "invalid_token", "error_description": #"say "hi""#, "scope": "openid"])
        #expect(UserIdentity.challengeParameters("Token").isEmpty)
        #expect(UserIdentity.challengeParameters("").isEmpty)
    }
}
