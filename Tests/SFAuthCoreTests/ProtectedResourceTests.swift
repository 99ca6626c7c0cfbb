import Foundation
import Testing

@testable import SFAuthCore

/// The pure rules of signing in to a protected resource: challenges (RFC 6750 §3, RFC 9728 §5.1),
/// resource URLs and their metadata (RFC 9728), registration (RFC 7591), and `resource` on every
/// request (RFC 8707).
@Suite struct ProtectedResourceTests {
    // MARK: - Challenges

    @Test func aChallengeGivesItsMetadataScopeAndError() {
        let challenge = BearerChallenge.parse(
            #"Bearer error="insufficient_scope", scope="mcp mcp:admin", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
        )
        #expect(challenge?.error == "insufficient_scope" && challenge?.wantsMoreScope == true)
        #expect(challenge?.scopes == ["mcp", "mcp:admin"])
        #expect(challenge?.resourceMetadata == "https://mcp.example/.well-known/oauth-protected-resource/mcp")
    }

    @Test func challengesAreReadByTheGrammarNotByGuesswork() {
        // Several challenges in one field (as repeated fields are joined), a token68, unquoted values,
        // escapes in a quoted string, and a scheme in any case.
        let header =
            #"Basic realm="x", Negotiate abc==, BEARER realm=api, error_description="say \"no\", twice", resource_metadata="https://r.example/m""#
        let challenge = BearerChallenge.parse(header)
        #expect(challenge?.errorDescription == #"say "no", twice"#)
        #expect(challenge?.resourceMetadata == "https://r.example/m")
        #expect(challenge?.error == nil && challenge?.scopes == [])
        #expect(BearerChallenge.parse(#"Basic realm="bearer""#) == nil)
        #expect(BearerChallenge.parse("") == nil)
        #expect(BearerChallenge.parse("Bearer")?.resourceMetadata == nil)
        // A parameter named twice keeps its first value: a proxy's addition cannot replace the resource's.
        #expect(
            BearerChallenge.parse(#"Bearer resource_metadata="https://a.example/m", resource_metadata="https://evil.example/m""#)?.resourceMetadata
                == "https://a.example/m")
    }

    @Test func onlyRefusalsCarryAChallenge() {
        let header = ["www-authenticate": #"Bearer resource_metadata="https://r.example/m""#]
        #expect(BearerChallenge.of(HTTPResponse(status: 401, headers: header)) != nil)
        #expect(BearerChallenge.of(HTTPResponse(status: 403, headers: header)) != nil)
        #expect(BearerChallenge.of(HTTPResponse(status: 200, headers: header)) == nil)
        #expect(BearerChallenge.of(HTTPResponse(status: 401)) == nil)
    }

    // MARK: - Resource URLs

    @Test func spellingsOfOneResourceAreOneResource() throws {
        #expect(try ProtectedResource.canonical("HTTPS://MCP.Example:443/mcp") == "https://mcp.example/mcp")
        #expect(try ProtectedResource.canonical("https://mcp.example/") == "https://mcp.example")
        #expect(try ProtectedResource.canonical("http://127.0.0.1:8000/mcp?x=1") == "http://127.0.0.1:8000/mcp?x=1")
        #expect(ProtectedResource.isSame("https://mcp.example", "https://MCP.example/"))
        #expect(!ProtectedResource.isSame("https://mcp.example/mcp", "https://mcp.example/mcp/"))
        #expect(!ProtectedResource.isSame("https://mcp.example/mcp", "https://mcp.example:8443/mcp"))
        #expect(throws: OAuthError.self) { try ProtectedResource.canonical("https://mcp.example/mcp#frag") }
        #expect(throws: OAuthError.self) { try ProtectedResource.canonical("http://mcp.example/mcp") }
        #expect(throws: OAuthError.self) { try ProtectedResource.canonical("mcp.example/mcp") }
    }

    @Test func metadataIsLookedForBeforeThePathThenAtTheRoot() {
        #expect(
            ProtectedResource.metadataLocations(for: "https://mcp.example/tools/mcp") == [
                "https://mcp.example/.well-known/oauth-protected-resource/tools/mcp", "https://mcp.example/.well-known/oauth-protected-resource",
            ])
        #expect(ProtectedResource.metadataLocations(for: "https://mcp.example/") == ["https://mcp.example/.well-known/oauth-protected-resource"])
    }

    @Test func aChallengeMayOnlyPointAtMetadataOnTheResourcesOwnOrigin() {
        let resource = "https://mcp.example/mcp"
        #expect(ProtectedResource.isOwnMetadataLocation("https://mcp.example/.well-known/oauth-protected-resource/mcp", for: resource))
        #expect(!ProtectedResource.isOwnMetadataLocation("https://evil.example/.well-known/oauth-protected-resource/mcp", for: resource))
        #expect(!ProtectedResource.isOwnMetadataLocation("https://mcp.example:8443/m", for: resource))
        #expect(!ProtectedResource.isOwnMetadataLocation("http://mcp.example/m", for: resource))
    }

    @Test func aRemoteResourcesTokensComeOnlyOverHTTPS() {
        #expect(throws: Never.self) { try ProtectedResource.requireAuthorizationServer("https://as.example", for: "https://mcp.example/mcp") }
        #expect(throws: Never.self) { try ProtectedResource.requireAuthorizationServer("http://127.0.0.1:9000", for: "http://127.0.0.1:8000/mcp") }
        #expect(throws: OAuthError.self) { try ProtectedResource.requireAuthorizationServer("http://127.0.0.1:9000", for: "https://mcp.example/mcp") }
        #expect(throws: OAuthError.self) { try ProtectedResource.requireAuthorizationServer("http://as.example", for: "https://mcp.example/mcp") }
    }

    @Test func aTokenGoesOnlyWithinItsResource() {
        let resource = "https://mcp.example/mcp"
        #expect(ProtectedResource.covers("https://mcp.example/mcp", resource: resource))
        #expect(ProtectedResource.covers("https://mcp.example/mcp/tools?x=1", resource: resource))
        #expect(!ProtectedResource.covers("https://mcp.example/mcpx", resource: resource))
        #expect(!ProtectedResource.covers("https://mcp.example/other/mcp", resource: resource))
        #expect(!ProtectedResource.covers("https://mcp.example:444/mcp", resource: resource))
        #expect(!ProtectedResource.covers("http://mcp.example/mcp", resource: resource))
        #expect(!ProtectedResource.covers("https://mcp.example.evil.example/mcp", resource: resource))
        #expect(ProtectedResource.covers("https://api.example/anything", resource: "https://api.example"))
    }

    // MARK: - Metadata

    @Test func metadataForAnotherResourceIsRefused() throws {
        func decode(_ body: String, status: Int = 200) throws(OAuthError) -> ProtectedResourceMetadata {
            try ProtectedResourceMetadata.decode(
                HTTPResponse(status: status, body: Array(body.utf8)), resource: "https://mcp.example/mcp", location: "https://mcp.example/m")
        }
        let good = try decode(#"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["mcp"]}"#)
        #expect(good.authorizationServers == ["https://as.example"] && good.scopesSupported == ["mcp"])
        #expect(throws: OAuthError.self) { try decode(#"{"resource":"https://evil.example/mcp","authorization_servers":["https://as.example"]}"#) }
        #expect(throws: OAuthError.self) { try decode(#"{"resource":"https://mcp.example/mcp"}"#) }
        #expect(throws: OAuthError.self) { try decode(#"{"authorization_servers":["https://as.example"]}"#) }
        #expect(throws: OAuthError.self) { try decode("<html>", status: 200) }
        #expect(throws: OAuthError.self) { try decode("{}", status: 404) }
    }

    @Test func theFirstAuthorizationServerUnlessOneIsChosen() throws {
        let metadata = ProtectedResourceMetadata(resource: "https://r.example", authorizationServers: ["https://a.example", "https://b.example/"])
        #expect(try metadata.authorizationServer(choosing: nil) == "https://a.example")
        #expect(try metadata.authorizationServer(choosing: "https://b.example") == "https://b.example/")
        #expect(throws: OAuthError.self) { try metadata.authorizationServer(choosing: "https://c.example") }
    }

    @Test func theServersMetadataIsLookedForAsTheMCPSpecificationOrdersIt() {
        #expect(
            DiscoveryDocument.authorizationServerLocations(issuer: "https://as.example/tenant1") == [
                "https://as.example/.well-known/oauth-authorization-server/tenant1", "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ])
        #expect(
            DiscoveryDocument.authorizationServerLocations(issuer: "https://as.example/") == [
                "https://as.example/.well-known/oauth-authorization-server", "https://as.example/.well-known/openid-configuration",
            ])
    }

    @Test func registrationAndS256AreReadFromTheServersMetadata() throws {
        let body = #"""
            {"issuer":"https://as.example","authorization_endpoint":"https://as.example/authorize","token_endpoint":"https://as.example/token",
             "registration_endpoint":"https://as.example/register","code_challenge_methods_supported":["S256"],
             "client_id_metadata_document_supported":true}
            """#
        let document = try DiscoveryDocument.decode(
            HTTPResponse(status: 200, body: Array(body.utf8)), issuer: "https://as.example", location: "https://as.example/.well-known/x")
        #expect(document.registrationEndpoint == "https://as.example/register")
        #expect(document.listsS256 && document.clientIdMetadataDocumentSupported)
        var unlisted = document
        unlisted.codeChallengeMethods = nil
        #expect(!unlisted.listsS256)
    }

    // MARK: - Registration

    @Test func sfauthRegistersAsANativePublicClientWithOneExactRedirect() throws {
        let request = ClientRegistration.request(
            endpoint: "https://as.example/register", redirectURI: "http://127.0.0.1:43123/callback", clientName: "sfauth",
            scopes: ["mcp", "mcp:admin"])
        #expect(request.method == "POST" && request.url == "https://as.example/register")
        let json = try #require(JSONValue.parse(request.body))
        #expect(json["application_type"] == .string("native"))
        #expect(json["token_endpoint_auth_method"] == .string("none"))
        #expect(json["redirect_uris"] == .array([.string("http://127.0.0.1:43123/callback")]))
        #expect(json["grant_types"] == .array([.string("authorization_code"), .string("refresh_token")]))
        #expect(json["scope"] == .string("mcp mcp:admin"))
    }

    @Test func aRegistrationAnswerWithoutAClientIdIsRefused() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func decode(_ status: Int, _ body: String) throws(OAuthError) -> RegisteredClient {
            try ClientRegistration.decode(
                HTTPResponse(status: status, body: Array(body.utf8)), issuer: "https://as.example", redirectURI: "http://127.0.0.1:43123/callback",
                scopes: ["mcp"], now: now)
        }
        let client = try decode(201, #"{"client_id":"c1","client_secret_expires_at":0}"#)
        #expect(client.clientId == "c1" && client.clientSecret == nil && client.clientSecretExpiresAt == nil)
        #expect(client.redirect == RedirectConfiguration(host: "127.0.0.1", port: 43123, path: "/callback"))
        #expect(client.isUsable(for: ["mcp"], at: now) && !client.isUsable(for: ["mcp", "mcp:admin"], at: now))
        do {
            _ = try decode(201, #"{"client_name":"sfauth"}"#)
            Issue.record("an answer without client_id was taken")
        } catch {
            #expect(error.description.contains("without a client_id"))
            #expect(error.remedy == .registerClientAt(issuer: "https://as.example"))
        }
        #expect(throws: OAuthError.self) { try decode(400, #"{"error":"invalid_redirect_uri"}"#) }
        let expiring = try decode(201, #"{"client_id":"c2","client_secret":"s","client_secret_expires_at":1800000100}"#)
        #expect(expiring.isUsable(for: [], at: now) && !expiring.isUsable(for: [], at: now.addingTimeInterval(100)))
    }

    // MARK: - resource on every request (RFC 8707)

    @Test func theResourceIsNamedOnTheAuthorizationTheExchangeAndTheRefresh() {
        let server = AuthorizationServer(authorizationEndpoint: "https://as.example/authorize", tokenEndpoint: "https://as.example/token")
        let client = ClientConfiguration(clientId: "c", scopes: ["mcp"], resource: "https://mcp.example/mcp")
        let request = AuthorizationRequest(
            server: server, client: client, redirectURI: "http://127.0.0.1:1/callback", state: "s",
            pkce: PKCE(verifier: String(repeating: "v", count: 43)),
            nonce: nil)
        #expect(request.url.contains("&resource=https%3A%2F%2Fmcp.example%2Fmcp"))
        let exchange = TokenRequest.authorizationCode(AuthorizationResponse(code: "code", state: "s", issuer: nil), for: request)
        #expect(exchange.bodyText.contains("resource=https%3A%2F%2Fmcp.example%2Fmcp"))
        let refresh = TokenRequest.refresh(refreshToken: "rt", tokenEndpoint: server.tokenEndpoint, client: client)
        #expect(refresh.bodyText.hasSuffix("&resource=https%3A%2F%2Fmcp.example%2Fmcp&client_id=c"))
        let plain = TokenRequest.refresh(refreshToken: "rt", tokenEndpoint: server.tokenEndpoint, client: ClientConfiguration(clientId: "c"))
        #expect(!plain.bodyText.contains("resource"))
        var twice = client
        twice.additionalAuthorizationParameters = [AuthorizationParameter(name: "resource", value: "https://other.example")]
        #expect(throws: OAuthError.self) { try twice.validate() }
    }

    @Test func aResourceAccountIsKeyedByItsServerAndResource() {
        let server = AuthorizationServer(
            authorizationEndpoint: "https://as.example/authorize", tokenEndpoint: "https://as.example/token", issuer: "https://as.example")
        let identifier = AccountIdentifier.make(server: server, userId: nil, clientId: "c", resource: "https://mcp.example/mcp")
        #expect(identifier == "as.example/resource:https://mcp.example/mcp")
        #expect(AccountIdentifier.make(server: server, userId: "alice", clientId: "c", resource: "https://mcp.example/mcp") == identifier)
        // Identified by server and resource: never taken for an unidentified sign-in, whatever the path says.
        #expect(!AccountIdentifier.isUnidentified("as.example/resource:https://mcp.example/unidentified-1"))
        #expect(AccountIdentifier.isUnidentified("as.example/unidentified-1"))
    }
}
