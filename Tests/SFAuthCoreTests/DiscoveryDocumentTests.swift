import Testing

@testable import SFAuthCore

@Suite struct DiscoveryDocumentTests {
    func response(_ json: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(json.utf8))
    }

    let minimal =
        #"{"issuer":"https://idp.example/tenant","authorization_endpoint":"https://idp.example/tenant/authorize","token_endpoint":"https://idp.example/tenant/token"}"#

    @Test func locationsFollowOIDCThenRFC8414() {
        #expect(
            DiscoveryDocument.locations(issuer: "https://idp.example/tenant/") == [
                "https://idp.example/tenant/.well-known/openid-configuration",
                "https://idp.example/.well-known/oauth-authorization-server/tenant",
            ])
        #expect(
            DiscoveryDocument.locations(issuer: "https://login.salesforce.com") == [
                "https://login.salesforce.com/.well-known/openid-configuration",
                "https://login.salesforce.com/.well-known/oauth-authorization-server",
            ])
    }

    @Test func fullDocument() throws {
        let document = try DiscoveryDocument.decode(
            response(
                """
                {"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/a","token_endpoint":"https://idp.example/t",
                 "revocation_endpoint":"https://idp.example/r","userinfo_endpoint":"https://idp.example/u","jwks_uri":"https://idp.example/k",
                 "device_authorization_endpoint":"https://idp.example/d","code_challenge_methods_supported":["plain","S256"],
                 "authorization_response_iss_parameter_supported":true}
                """), issuer: "https://idp.example", location: "L")
        #expect(
            document.server
                == AuthorizationServer(
                    authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
                    revocationEndpoint: "https://idp.example/r", userinfoEndpoint: "https://idp.example/u",
                    issuer: "https://idp.example", jwksURI: "https://idp.example/k",
                    deviceAuthorizationEndpoint: "https://idp.example/d"
                ).with(issuerInResponse: true))
    }

    @Test func withoutPKCEMethodsListedLikeSalesforceIsAccepted() throws {
        let document = try DiscoveryDocument.decode(response(minimal), issuer: "https://idp.example/tenant", location: "L")
        #expect(document.codeChallengeMethods == nil)
        #expect(document.server.issuerInAuthorizationResponse == nil)
    }

    @Test(arguments: [
        (#"{"issuer":"https://other.example","authorization_endpoint":"https://a/a","token_endpoint":"https://a/t"}"#, "not 'https://idp.example'"),
        (#"{"issuer":"https://idp.example/","authorization_endpoint":"https://a/a","token_endpoint":"https://a/t"}"#, "not 'https://idp.example'"),
        (#"{"authorization_endpoint":"https://a/a","token_endpoint":"https://a/t"}"#, "no 'issuer'"),
        (#"{"issuer":"https://idp.example","token_endpoint":"https://a/t"}"#, "lacks an authorization_endpoint"),
        (#"{"issuer":"https://idp.example","authorization_endpoint":"http://a.example/a","token_endpoint":"https://a/t"}"#, "plain http"),
        (
            #"{"issuer":"https://idp.example","authorization_endpoint":"https://a/a","token_endpoint":"https://a/t","code_challenge_methods_supported":["plain"]}"#,
            "does not support PKCE with S256"
        ),
        ("[1, 2]", "did not answer with server metadata"),
    ])
    func unusableMetadataIsAConfigurationError(body: String, expected: String) {
        let error = #expect(throws: OAuthError.self) {
            try DiscoveryDocument.decode(response(body), issuer: "https://idp.example", location: "L")
        }
        #expect(error?.recovery == .fixConfiguration)
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }

    @Test(arguments: [(500, "<html><title>Oops</title></html>"), (503, ""), (200, "<html>login</html>"), (200, "{\"issuer\": \"https://idp")])
    func serverFailuresAreRetriable(status: Int, body: String) {
        let error = #expect(throws: OAuthError.self) {
            try DiscoveryDocument.decode(HTTPResponse(status: status, body: Array(body.utf8)), issuer: "https://idp.example", location: "L")
        }
        #expect(error?.recovery == .retryLater, "\(String(describing: error))")
        #expect(error?.description.contains("HTTP \(status)") == true)
    }

    @Test func rfc9207IssuerCheck() throws {
        let server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t", issuer: "https://idp.example")
        let advertised = server.with(issuerInResponse: true)
        // Matching iss: accepted, advertised or not.
        try AuthorizationResponse(code: "c", state: "s", issuer: "https://idp.example").checkIssuer(of: advertised)
        try AuthorizationResponse(code: "c", state: "s", issuer: "https://idp.example").checkIssuer(of: server)
        // No iss: accepted only when not advertised.
        try AuthorizationResponse(code: "c", state: "s").checkIssuer(of: server)
        #expect(throws: OAuthError.self) { try AuthorizationResponse(code: "c", state: "s").checkIssuer(of: advertised) }
        // The expected issuer unknown (explicit endpoints): any iss is accepted here and recorded by the caller.
        let unknown = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
        try AuthorizationResponse(code: "c", state: "s", issuer: "https://idp.example").checkIssuer(of: unknown)
        try AuthorizationResponse(code: "c", state: "s").checkIssuer(of: unknown)
        // Another issuer: refused whether advertised or not (mix-up).
        #expect(throws: OAuthError.self) { try AuthorizationResponse(code: "c", state: "s", issuer: "https://evil.example").checkIssuer(of: server) }
        #expect(throws: OAuthError.self) {
            try AuthorizationResponse(code: "c", state: "s", issuer: "https://idp.example/").checkIssuer(of: advertised)
        }
    }
}

extension AuthorizationServer {
    func with(issuerInResponse: Bool) -> AuthorizationServer {
        var copy = self
        copy.issuerInAuthorizationResponse = issuerInResponse
        return copy
    }
}

/// When nobody chose scopes, the metadata suggest them: `openid` (and `offline_access`) where listed
/// — Google and Glewlwyd refuse an authorization request without a scope (issue 17 §9).
@Suite struct DiscoveredScopesTests {
    func document(_ scopes: String?) throws -> DiscoveryDocument {
        let listed = scopes.map { #","scopes_supported":\#($0)"# } ?? ""
        let json =
            #"{"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/a","token_endpoint":"https://idp.example/t"\#(listed)}"#
        return try DiscoveryDocument.decode(
            HTTPResponse(status: 200, headers: [:], body: Array(json.utf8)), issuer: "https://idp.example",
            location: "https://idp.example/.well-known/openid-configuration")
    }

    @Test func openIDAndOfflineAccessWhereListed() throws {
        #expect(try document(#"["openid","profile","email","offline_access"]"#).defaultScopes == ["openid", "offline_access"])
        #expect(try document(#"["openid","email","profile"]"#).defaultScopes == ["openid"])  // Google: access_type=offline instead
        #expect(try document(#"["read","write"]"#).defaultScopes == [])  // plain OAuth 2.0: the server's default
        #expect(try document(nil).defaultScopes == [])
        #expect(try document(#"["openid",7]"#).scopesSupported == ["openid"])
    }
}
