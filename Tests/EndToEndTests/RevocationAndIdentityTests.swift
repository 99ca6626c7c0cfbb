import Foundation
import Glibc
import SFAuth
import Testing

/// `TokenRevoker` and `IdentityFetcher` against the real test server (django-oauth-toolkit) with
/// tokens from a real browser login, and against a small loopback server that answers the way
/// Salesforce does where DOT differs (form-encoded 400 on revocation, 403 `Bad_OAuth_Token`).
@Suite(.serialized) struct RevocationAndIdentityTests {
    // MARK: - django-oauth-toolkit

    @Test func revokingEndsBothTokensAtTheServer() async throws {
        let env = try TestEnvironment()
        let credentials = try await login(env, scopes: ["openid", "profile", "email"])
        let refreshToken = try #require(credentials.refreshToken)
        #expect(try await resourceStatus(env, token: credentials.accessToken) == 200)

        let revoker = TokenRevoker(httpClient: CurlHTTPClient())
        let report = await revoker.revoke(credentials, keptIn: nil)

        let host = String(try env.value("SFAUTH_TEST_SERVER_URL").dropFirst("http://".count))  // 127.0.0.1:PORT
        #expect(report.endpoint == (try env.value("SFAUTH_TEST_REVOKE_URL")))
        // DOT: revoking the refresh token deletes its access token; the access token's revocation that
        // follows finds nothing and answers 200 (RFC 7009 §2.2), which counts as revoked.
        #expect(report.entries == [.init(token: .refreshToken, status: .revoked), .init(token: .accessToken, status: .revoked)])
        #expect(report.summary == "revoked the refresh token and the access token at \(host)")
        #expect(report.isRevokedAtServer)

        // The resource no longer accepts the access token …
        #expect(try await resourceStatus(env, token: credentials.accessToken) == 401)
        // … and the token endpoint no longer accepts the refresh token.
        let refresh = try await CurlHTTPClient().send(
            TokenRequest.refresh(
                refreshToken: refreshToken, tokenEndpoint: try env.value("SFAUTH_TEST_TOKEN_URL"),
                client: ClientConfiguration(clientId: credentials.clientId)))
        #expect(refresh.status == 400)
        let refreshError = #expect(throws: OAuthError.self) { try TokenResponse.decode(refresh, endpoint: "token endpoint") }
        guard case .tokenRequestRejected(let serverError)? = refreshError else {
            Issue.record("expected tokenRequestRejected, got \(String(describing: refreshError))")
            return
        }
        #expect(serverError.code == "invalid_grant")
        #expect(serverError.httpStatus == 400)

        // Revoking again: DOT answers 200 for a token it has already revoked, so both are "revoked" again
        // (never an error, never alreadyInvalid).
        let again = await revoker.revoke(credentials, keptIn: nil)
        #expect(again.entries == [.init(token: .refreshToken, status: .revoked), .init(token: .accessToken, status: .revoked)])
    }

    @Test func identityAfterLoginAndAfterRevocation() async throws {
        let env = try TestEnvironment()
        let credentials = try await login(env, scopes: ["openid", "profile", "email"])
        let fetcher = IdentityFetcher(httpClient: CurlHTTPClient())

        let identity = try await fetcher.fetch(for: credentials)
        #expect(
            identity
                == UserIdentity(
                    userId: "1", username: try env.value("SFAUTH_TEST_USERNAME"),
                    displayName: "Alice Example", email: "alice@example.test"))
        #expect(identity.userId == credentials.userId)

        // Salesforce flavor asks the identity URL (here: pointed at the same userinfo endpoint).
        var salesforceShaped = credentials
        salesforceShaped.server.flavor = .salesforce
        salesforceShaped.server.userinfoEndpoint = nil
        salesforceShaped.identityURL = try env.value("SFAUTH_TEST_USERINFO_URL")
        let viaIdentityURL = try await fetcher.fetch(for: salesforceShaped)
        #expect(viaIdentityURL.userId == "1")
        #expect(viaIdentityURL.username == "alice")

        // An identity that is not the tokens' user is refused (OIDC Core §5.3.2).
        var someoneElse = credentials
        someoneElse.userId = "2"
        await #expect(throws: OAuthError.invalidServerResponse("the identity returned is user '1', but the tokens belong to user '2'")) {
            try await fetcher.fetch(for: someoneElse)
        }

        // After revocation the userinfo endpoint answers 401 invalid_token: the token is no longer accepted.
        let report = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
        #expect(report.isRevokedAtServer)
        let error = await #expect(throws: OAuthError.self) { try await fetcher.fetch(for: credentials) }
        guard case .loginRequired(let message)? = error else {
            Issue.record("expected loginRequired, got \(String(describing: error))")
            return
        }
        #expect(message.text.hasPrefix("The server no longer accepts the access token (HTTP 401: invalid_token"))
        #expect(error?.recovery == .logInAgain)
    }

    @Test func userinfoWithoutTheOpenIDScopeIsAConfigurationError() async throws {
        let env = try TestEnvironment()
        let credentials = try await login(env, scopes: ["read"])
        #expect(credentials.idToken == nil)
        let error = await #expect(throws: OAuthError.self) {
            try await IdentityFetcher(httpClient: CurlHTTPClient()).fetch(for: credentials)
        }
        guard case .configuration(let message)? = error else {
            Issue.record("expected configuration, got \(String(describing: error))")
            return
        }
        // DOT refuses a valid token without `openid` with 401 invalid_token, not 403 insufficient_scope;
        // the fetcher knows the granted scopes and says what is really wrong.
        #expect(message.text.contains("not granted the 'openid' scope"))
        #expect(message.text.contains("(granted: read)"))
        #expect(message.text.contains("HTTP 401: invalid_token"))
        _ = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
    }

    // MARK: - Failures without a server

    @Test func unreachableRevocationEndpointIsReportedNotThrown() async throws {
        let port = try closedPort()
        let credentials = fakeCredentials(
            server: AuthorizationServer(
                authorizationEndpoint: "http://127.0.0.1:\(port)/authorize", tokenEndpoint: "http://127.0.0.1:\(port)/token",
                revocationEndpoint: "http://127.0.0.1:\(port)/revoke", userinfoEndpoint: "http://127.0.0.1:\(port)/userinfo"))

        let report = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
        guard case .failed(.network(let message))? = report.status(of: .refreshToken) else {
            Issue.record("expected a network failure, got \(report.entries)")
            return
        }
        #expect(message.contains("127.0.0.1:\(port)"))
        #expect(report.status(of: .accessToken) == .notAttempted)
        #expect(report.summary == "could not reach 127.0.0.1:\(port) to revoke the tokens (\(message)); they were only forgotten locally")
        #expect(!report.isRevokedAtServer)

        let fetchError = await #expect(throws: OAuthError.self) {
            try await IdentityFetcher(httpClient: CurlHTTPClient()).fetch(for: credentials)
        }
        guard case .network(let text)? = fetchError else {
            Issue.record("expected a network error, got \(String(describing: fetchError))")
            return
        }
        #expect(text.contains("127.0.0.1:\(port)"))
    }

    @Test func noRevocationEndpointMeansNothingIsSent() async throws {
        let credentials = fakeCredentials(
            server: AuthorizationServer(
                authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token"))
        let report = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
        #expect(report == RevocationReport(endpoint: nil, entries: []))
        #expect(report.summary == "the server has no revocation endpoint; the tokens were only forgotten locally")

        await #expect(throws: OAuthError.configuration("https://idp.example/token has no userinfo endpoint, so who is signed in cannot be looked up"))
        {
            try await IdentityFetcher(httpClient: CurlHTTPClient()).fetch(for: credentials)
        }
    }

    @Test func plainHTTPToAnotherHostIsRefusedBeforeSending() async throws {
        let credentials = fakeCredentials(
            server: AuthorizationServer(
                authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
                revocationEndpoint: "http://idp.example/revoke", userinfoEndpoint: "http://idp.example/userinfo"))
        let report = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
        guard case .failed(.configuration)? = report.status(of: .refreshToken) else {
            Issue.record("expected a configuration failure, got \(report.entries)")
            return
        }
        #expect(report.status(of: .accessToken) == .notAttempted)
        await #expect(throws: OAuthError.self) { try await IdentityFetcher(httpClient: CurlHTTPClient()).fetch(for: credentials) }
    }

    @Test func cancelledRevocationIsReported() async throws {
        let env = try TestEnvironment()
        var server = try env.server
        server.revocationEndpoint = try env.value("SFAUTH_TEST_REVOKE_URL")
        let credentials = fakeCredentials(server: server)
        let revoker = TokenRevoker(httpClient: CurlHTTPClient())
        let task = Task {
            try? await Task.sleep(for: .seconds(60))  // returns as soon as the task is cancelled
            return await revoker.revoke(credentials, keptIn: nil)
        }
        task.cancel()
        let report = await task.value
        #expect(
            report.entries == [
                .init(token: .refreshToken, status: .failed(.cancelled)),
                .init(token: .accessToken, status: .notAttempted),
            ])
        #expect(report.summary.hasPrefix("revocation at 127.0.0.1:"))
        #expect(report.summary.hasSuffix(" was cancelled; the tokens were only forgotten locally"))
    }

    // MARK: - Salesforce-shaped server

    @Test func salesforceShapedRevocationAndIdentity() async throws {
        let fixture = try SalesforceShapedServer()
        defer { fixture.stop() }
        let base = "http://127.0.0.1:\(fixture.port)"
        let server = Salesforce.server(loginHost: base)
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "PlatformCLI", redirect: Salesforce.defaultRedirect),
            redirectURI: "http://localhost:1717/OauthRedirect", state: "s", pkce: PKCE(verifier: String(repeating: "v", count: 43)), nonce: nil)
        let credentials = OAuthCredentials(
            response: TokenResponse(
                accessToken: SalesforceShapedServer.accessToken, refreshToken: SalesforceShapedServer.refreshToken,
                scopes: ["refresh_token", "api", "web"], instanceURL: "https://acme.my.salesforce.com",
                identityURL: "\(base)/id/00D5g000004ExAmEAK/0055g00000AbCdEAAV"),
            request: request, now: Date())
        #expect(credentials.userId == "0055g00000AbCdEAAV")

        let fetcher = IdentityFetcher(httpClient: CurlHTTPClient())
        #expect(
            try await fetcher.fetch(for: credentials)
                == UserIdentity(
                    userId: "0055g00000AbCdEAAV", username: "alan.van@acme.example", displayName: "Alan Van",
                    email: "alan.van@acme.example", organizationId: "00D5g000004ExAmEAK"))

        // Revoking the refresh token ends the access token; the access token's revocation then gets
        // Salesforce's form-encoded 400, which counts as "already invalid".
        let report = await TokenRevoker(httpClient: CurlHTTPClient()).revoke(credentials, keptIn: nil)
        #expect(
            report.entries == [
                .init(token: .refreshToken, status: .revoked),
                .init(
                    token: .accessToken,
                    status: .alreadyInvalid(
                        OAuthServerError(
                            code: "unsupported_token_type", description: "this token type is not supported", httpStatus: 400))),
            ])
        #expect(report.summary == "revoked the refresh token at 127.0.0.1:\(fixture.port)")
        #expect(fixture.requests().contains("POST /services/oauth2/revoke token=5Aep861.RT&token_type_hint=refresh_token&client_id=PlatformCLI"))

        // The identity URL now answers 403 Bad_OAuth_Token: the token is no longer accepted.
        await #expect(
            throws: OAuthError.loginRequired(
                "The server no longer accepts the access token (HTTP 403: Bad_OAuth_Token): it has expired or was revoked. Refresh it, or sign in again."
            )
        ) {
            try await fetcher.fetch(for: credentials)
        }
    }

    // MARK: - Helpers

    /// A real browser login at the test server, with its revocation endpoint configured.
    private func login(_ env: TestEnvironment, scopes: [String]) async throws -> OAuthCredentials {
        let directory = try TestEnvironment.temporaryDirectory()
        var server = try env.server
        server.revocationEndpoint = try env.value("SFAUTH_TEST_REVOKE_URL")
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: server,
                client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID"), scopes: scopes),
                timeout: .seconds(60),
                browserLauncher: SystemBrowserLauncher(environment: try env.browserEnvironment(log: directory + "/browser.json"))),
            delegate: RecordingDelegate())
        return try await coordinator.authenticate()
    }

    /// The status the protected resource `/api/me` answers for a bearer token.
    private func resourceStatus(_ env: TestEnvironment, token: String) async throws -> Int {
        try await CurlHTTPClient().send(
            HTTPRequest(
                method: "GET", url: try env.value("SFAUTH_TEST_RESOURCE_URL"), headers: [("Authorization", "Bearer \(token)")])
        ).status
    }

    private func fakeCredentials(server: AuthorizationServer) -> OAuthCredentials {
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "sfauth-public"),
            redirectURI: "http://127.0.0.1:1/callback", state: "s",
            pkce: PKCE(verifier: String(repeating: "v", count: 43)), nonce: nil)
        return OAuthCredentials(
            response: TokenResponse(accessToken: "access-not-issued", refreshToken: "refresh-not-issued"),
            request: request, now: Date())
    }

    /// A loopback port nobody listens on: bound, then closed.
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw SetupError("bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A loopback HTTP server (python3, standard library) that answers like Salesforce's login host:
/// `/services/oauth2/revoke` answers 200, or 400 with a form-encoded `unsupported_token_type` for a
/// token it does not know (revoking the refresh token ends the access token); the identity URL
/// `/id/<org>/<user>` answers the identity JSON, or 403 `Bad_OAuth_Token` for a token it does not accept.
/// It exits when its stdin closes.
final class SalesforceShapedServer: @unchecked Sendable {
    static let accessToken = "00D5g000004ExAm!AQ0AQFake"
    static let refreshToken = "5Aep861.RT"

    let port: Int
    private let process: Process
    private let stdin: Pipe
    private let log: String

    static let script = #"""
        import json, sys, threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qsl
        ACCESS, REFRESH, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
        valid = {ACCESS, REFRESH}
        identity = {"id": "", "asserted_user": True, "user_id": "0055g00000AbCdEAAV", "organization_id": "00D5g000004ExAmEAK",
                    "username": "alan.van@acme.example", "nick_name": "alan.van", "display_name": "Alan Van",
                    "email": "alan.van@acme.example", "email_verified": True, "first_name": "Alan", "last_name": "Van",
                    "active": True, "user_type": "STANDARD", "language": "en_US", "locale": "en_US", "utcOffset": -28800000}
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def answer(self, status, body, ctype):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                with open(LOG, "a") as f: f.write("POST %s %s\n" % (self.path, body))
                if self.path != "/services/oauth2/revoke": return self.answer(404, "Bad_Id", "text/plain")
                token = dict(parse_qsl(body)).get("token", "")
                if token not in valid:
                    return self.answer(400, "error=unsupported_token_type&error_description=this%20token%20type%20is%20not%20supported",
                                       "application/x-www-form-urlencoded;charset=UTF-8")
                valid.discard(token)
                if token == REFRESH: valid.discard(ACCESS)
                self.answer(200, "", "text/plain")
            def do_GET(self):
                with open(LOG, "a") as f: f.write("GET %s\n" % self.path)
                if not self.path.startswith("/id/"): return self.answer(404, "Bad_Id", "text/plain")
                if self.headers.get("Authorization", "") != "Bearer " + ACCESS or ACCESS not in valid:
                    return self.answer(403, "Bad_OAuth_Token", "text/plain;charset=UTF-8")
                identity["id"] = "https://login.salesforce.com" + self.path
                self.answer(200, json.dumps(identity), "application/json;charset=UTF-8")
        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        print(server.server_address[1], flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        """#

    init() throws {
        log = FileManager.default.temporaryDirectory.path + "/sfauth-sf-shaped-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: log, contents: Data())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, Self.accessToken, Self.refreshToken, log]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        self.stdin = stdin
        var line = [UInt8]()
        var byte: UInt8 = 0
        let reader = stdout.fileHandleForReading.fileDescriptor
        while read(reader, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw SetupError("the Salesforce-shaped server did not start")
        }
        self.port = port
    }

    /// The requests received so far, one line each: `POST <path> <body>` or `GET <path>`.
    func requests() -> [String] {
        (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: log)
    }
}
