import Foundation
import SFAuth
import Testing

/// How `ResourceSignIn` finds the server and the client of a protected resource: the scripted
/// server here answers as the MCP SDK's does (the end-to-end tests run the real one,
/// Tests/CLI/test_resource_sign_in.py); these pin down the choices — which client, which port, when
/// to register again — one at a time.
@Suite struct ResourceSignInTests {
    let resource = "https://mcp.example/mcp"
    let issuer = "https://as.example"
    let registrations = ClientRegistrations(directory: FileManager.default.temporaryDirectory.path + "/sfauth-registrations-" + UUID().uuidString)

    /// The resource, its metadata and its server's metadata (with `extra` members); registration
    /// answers `registered` client ids in turn.
    func server(extra: String = "", registered: [String] = ["c1", "c2"]) -> FakeHTTPClient {
        FakeHTTPClient()
            .on(
                .url(resource),
                reply: .response(
                    HTTPResponse(
                        status: 401,
                        headers: [
                            "www-authenticate":
                                #"Bearer error="invalid_token", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
                        ]
                    ))
            )
            .on(
                .url("https://mcp.example/.well-known/oauth-protected-resource/mcp"),
                reply: .json(
                    200,
                    #"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["mcp","mcp:admin"]}"#)
            )
            .on(
                .url("https://as.example/.well-known/oauth-authorization-server"),
                reply: .json(
                    200,
                    #"{"issuer":"https://as.example","authorization_endpoint":"https://as.example/authorize","token_endpoint":"https://as.example/token","code_challenge_methods_supported":["S256"]"#
                        + extra + "}")
            )
            .on(.url("https://as.example/register"), replies: registered.map { .json(201, #"{"client_id":"\#($0)"}"#) })
    }

    func prepare(_ http: FakeHTTPClient, _ options: ResourceSignIn.Options = .init()) async throws(OAuthError) -> ResourceSignIn.Prepared {
        try await ResourceSignIn(
            httpClient: http, discoveryClient: DiscoveryClient(httpClient: http, cacheDirectory: nil), registrations: registrations
        )
        .prepare(resource: resource, options: options)
    }

    @Test func aRegistrationIsKeptWithItsPortAndUsedAgain() async throws {
        let registering = #", "registration_endpoint": "https://as.example/register""#
        let first = try await prepare(server(extra: registering))
        guard case .registered(let registered, reused: false) = first.clientSource else { throw Expectation("a new registration") }
        #expect(first.client.clientId == "c1" && first.client.resource == resource && first.client.scopes == ["mcp", "mcp:admin"])
        #expect(first.client.redirect.port != 0 && registered.redirectURI == "http://127.0.0.1:\(first.client.redirect.port)/callback")
        #expect(registrations.registration(at: issuer) == registered)

        // The server still knows it (its authorization endpoint answers with a page): used again, same port.
        let again = server(extra: registering).on(.any, reply: .plain(200, "<form>"))
        let second = try await prepare(again)
        #expect(second.clientSource == .registered(registered, reused: true))
        #expect(second.client.clientId == "c1" && second.client.redirect.port == first.client.redirect.port)
        #expect(!again.requests.contains { $0.url == "https://as.example/register" })
    }

    @Test func aClientTheServerForgotIsRegisteredAgainOnTheSamePort() async throws {
        let registering = #", "registration_endpoint": "https://as.example/register""#
        let first = try await prepare(server(extra: registering))
        // RFC 6749 §4.1.2.1: an unknown client is answered with an error page, not a redirect.
        let forgetful = server(extra: registering, registered: ["c2"]).on(.any, reply: .json(400, #"{"error":"invalid_request"}"#))
        let second = try await prepare(forgetful)
        #expect(second.client.clientId == "c2" && second.client.redirect.port == first.client.redirect.port)
        #expect(second.notices.contains { $0.contains("no longer knows") })
        #expect(registrations.registration(at: issuer)?.clientId == "c2")
    }

    @Test func aScopeTheServerRefusesIsSaidBeforeAnyBrowserOpens() async throws {
        let registering = #", "registration_endpoint": "https://as.example/register""#
        let first = try await prepare(server(extra: registering))
        let redirect = "http://127.0.0.1:\(first.client.redirect.port)/callback"
        // The refusal a server redirects back (RFC 6749 §4.1.2.1), with the request's own state.
        let refusing = server(extra: registering).on(.any) { request in
            let state = URLComponents(string: request.url)?.queryItems?.first { $0.name == "state" }?.value ?? ""
            return HTTPResponse(status: 302, headers: ["location": redirect + "?error=invalid_scope&error_description=no&state=" + state])
        }
        do {
            _ = try await prepare(refusing)
            Issue.record("a refused request was prepared")
        } catch {
            #expect(error.description.contains("invalid_scope"))
        }
    }

    @Test func aGivenClientIdIsUsedAsItIs() async throws {
        let http = server(extra: #", "registration_endpoint": "https://as.example/register""#)
        let prepared = try await prepare(http, .init(clientId: "mine", scopes: ["mcp"], redirect: .init(port: 8400)))
        #expect(prepared.clientSource == .preRegistered && prepared.client.clientId == "mine" && prepared.client.redirect.port == 8400)
        #expect(!http.requests.contains { $0.url == "https://as.example/register" })
    }

    @Test func aMetadataDocumentIsTheClientWhereTheServerTakesOne() async throws {
        let document = "https://tool.example/sfauth.json"
        let http = server(extra: #", "client_id_metadata_document_supported": true"#)
            .on(.url(document), reply: .json(200, #"{"client_id":"https://tool.example/sfauth.json","redirect_uris":["http://127.0.0.1/callback"]}"#))
        let prepared = try await prepare(http, .init(clientMetadataURL: document))
        #expect(prepared.clientSource == .metadataDocument(document) && prepared.client.clientId == document)
        #expect(prepared.client.redirect.path == "/callback")
    }

    @Test func withoutRegistrationNorAClientTheErrorSaysWhatToGive() async throws {
        do {
            _ = try await prepare(server())
            Issue.record("a sign-in without a client was prepared")
        } catch {
            #expect(error.remedy == .registerClientAt(issuer: issuer))
        }
    }

    @Test func aServerWithoutS256IsRefused() async throws {
        let http = FakeHTTPClient()
            .on(.url(resource), reply: .plain(401))
            .on(
                .url("https://mcp.example/.well-known/oauth-protected-resource/mcp"),
                reply: .json(200, #"{"resource":"https://mcp.example/mcp","authorization_servers":["https://as.example"]}"#)
            )
            .on(
                .url("https://as.example/.well-known/oauth-authorization-server"),
                reply: .json(
                    200, #"{"issuer":"https://as.example","authorization_endpoint":"https://as.example/a","token_endpoint":"https://as.example/t"}"#))
        do {
            _ = try await prepare(http)
            Issue.record("a server that does not list S256 was used")
        } catch {
            #expect(error.description.contains("S256"))
        }
    }
}

/// A failed expectation with a message, for `guard … else { throw }`.
private struct Expectation: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
