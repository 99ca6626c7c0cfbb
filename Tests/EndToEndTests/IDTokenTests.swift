import Foundation
import SFAuth
import Testing

/// ID token validation against the real test server (django-oauth-toolkit) with the headless
/// browser: its ID tokens, its JWKS, and its test controls (`POST /test/id-token-mode`, see
/// Tests/Server/README.md) that tamper with, mis-address, expire or re-sign the next ID token.
@Suite(.serialized) struct IDTokenTests {
    let env: TestEnvironment
    let directory: String
    let store: FileCredentialStore

    init() throws {
        env = try TestEnvironment()
        directory = try TestEnvironment.temporaryDirectory()
        store = FileCredentialStore(directory: directory + "/store")
    }

    /// The test server as discovery describes it: with its JWKS, so signatures are checked.
    var server: AuthorizationServer {
        get throws {
            var server = try env.server
            server.jwksURI = try env.value("SFAUTH_TEST_JWKS_URL")
            return server
        }
    }

    func coordinator(server: AuthorizationServer? = nil, log: String = "browser.json") throws -> OAuthCoordinator {
        OAuthCoordinator(
            configuration: .init(
                server: try server ?? self.server,
                client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID"), scopes: ["openid", "profile"]),
                timeout: .seconds(60),
                browserLauncher: SystemBrowserLauncher(environment: try env.browserEnvironment(log: directory + "/" + log))),
            delegate: nil, store: store)
    }

    // MARK: - Accepted

    @Test func aValidLoginIsVerifiedAgainstTheJWKSAndNamedAfterItsClaims() async throws {
        try await IDTokenControls(env).arm("normal")
        let fetchesBefore = try await IDTokenControls(env).keySetRequests()
        let credentials = try await coordinator().authenticate()
        #expect(credentials.userId == "1")
        #expect(credentials.username == (try env.value("SFAUTH_TEST_USERNAME")))
        #expect(try store.loadDefault() == credentials)
        #expect(try await IDTokenControls(env).keySetRequests() == fetchesBefore + 1)
    }

    @Test func anES256TokenFromAKeyInTheJWKSIsAccepted() async throws {
        let controls = IDTokenControls(env)
        let appliedBefore = try await controls.applied("es256")
        try await controls.arm("es256")
        let credentials = try await coordinator().authenticate()
        #expect(try await controls.applied("es256") == appliedBefore + 1)  // the token really was re-signed with the EC key
        #expect(credentials.userId == "1")
        #expect(try store.loadDefault() == credentials)
    }

    @Test func aRotatedKeyIsFoundByRefetchingTheJWKSOnce() async throws {
        let controls = IDTokenControls(env)
        let coordinator = try coordinator()
        try await controls.arm("normal")
        let before = try await controls.keySetRequests()
        _ = try await coordinator.authenticate()  // fetches the JWKS and caches it
        #expect(try await controls.keySetRequests() == before + 1)

        let rotationsBefore = try await controls.applied("rotate")
        try await controls.arm("rotate")  // the next token: a key the cache lacks
        let credentials = try await coordinator.authenticate()
        #expect(try await controls.applied("rotate") == rotationsBefore + 1)
        #expect(try await controls.keySetRequests() == before + 2)  // exactly one refetch
        #expect(try store.loadDefault() == credentials)
    }

    // MARK: - Refused, each with its own message, nothing stored

    @Test(arguments: [
        ("tamper", "the ID token's signature does not verify against the keys at $JWKS"),
        ("wrong-audience", "the ID token is for audience 'someone-else', not this client '$CLIENT'"),
        ("expired", "the ID token expired at "),
        ("wrong-nonce", "the ID token's nonce does not match this login's"),
        ("wrong-issuer", "the ID token was issued by 'https://issuer.invalid/o', not by this server's issuer '$ISSUER'"),
        ("alg-none", "the ID token is not signed (its algorithm is 'none')"),
        ("hs256", "the ID token is signed with 'HS256', a shared-secret (HMAC) algorithm"),
        ("unknown-kid", "the ID token was signed with the key 'sfauth-test-never-published-"),
    ])
    func aBadIDTokenFailsTheLoginAndStoresNothing(mode: String, expected: String) async throws {
        let controls = IDTokenControls(env)
        let message = expected.replacingOccurrences(of: "$JWKS", with: try env.value("SFAUTH_TEST_JWKS_URL"))
            .replacingOccurrences(of: "$CLIENT", with: try env.value("SFAUTH_TEST_CLIENT_ID"))
            .replacingOccurrences(of: "$ISSUER", with: try env.value("SFAUTH_TEST_ISSUER"))
        let appliedBefore = try await controls.applied(mode)
        try await controls.arm(mode)

        let error = await #expect(throws: OAuthError.self) { try await coordinator(log: "\(mode).json").authenticate() }
        try await controls.arm("normal")

        #expect(try await controls.applied(mode) == appliedBefore + 1)
        guard case .idTokenRejected(let reason)? = error else {
            Issue.record("expected idTokenRejected, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix(message), "\(reason)")
        if mode == "expired" { #expect(reason.contains("(this machine's clock says ")) }
        if mode == "unknown-kid" { #expect(reason.hasSuffix("(fetched just now)")) }
        #expect(error?.recovery == .serverRefused)
        #expect(try store.identifiers().isEmpty)
        let report = try await TestEnvironment.browserReport(at: directory + "/\(mode).json")
        #expect(report["page_text"]?.stringValue?.contains("Sign-in failed") == true)
    }

    @Test func anOpenIDLoginWithoutAnIDTokenIsRefused() async throws {
        let controls = IDTokenControls(env)
        try await controls.arm("no-id-token")
        let error = await #expect(throws: OAuthError.self) { try await coordinator().authenticate() }
        try await controls.arm("normal")
        #expect(error == .idTokenRejected("the server granted the 'openid' scope but sent no ID token (OIDC Core §3.1.3.3 requires one)"))
        #expect(try store.identifiers().isEmpty)
    }

    // MARK: - Refresh (OIDC Core §12.2)

    @Test func aRefreshWithATamperedIDTokenIsRefusedAndTheRotatedRefreshTokenStillWorks() async throws {
        let controls = IDTokenControls(env)
        try await controls.arm("normal")
        let signedIn = try await coordinator().authenticate()
        let source = TokenSource(store: store, httpClient: CurlHTTPClient())

        try await controls.arm("tamper", clientId: try env.value("SFAUTH_TEST_CLIENT_ID"))
        let error = await #expect(throws: OAuthError.self) { try await source.credentials(forceRefresh: true) }
        try await controls.arm("normal")
        #expect(error?.description.contains("in the refresh response, the ID token's signature does not verify") == true)
        let kept = try #require(try store.loadDefault())
        #expect(kept.accessToken == signedIn.accessToken)  // the refused response's access token is not handed out
        #expect(kept.refreshToken != signedIn.refreshToken)  // but its rotated refresh token is kept
        #expect(kept.idToken == signedIn.idToken)

        // The rotated refresh token was stored: refreshing again works (the retired one would have
        // made the server revoke the whole family).
        let refreshed = try await source.credentials(forceRefresh: true)
        #expect(refreshed.accessToken != kept.accessToken)
        #expect(refreshed.idToken != signedIn.idToken)
        #expect(try store.loadDefault() == refreshed)
    }
}

/// The test server's ID-token controls.
struct IDTokenControls {
    let url: String

    init(_ env: TestEnvironment) {
        url = (env.variables["SFAUTH_TEST_SERVER_URL"] ?? "") + "/test/id-token-mode"
    }

    /// Arms `mode` for the next token response that carries an ID token (`normal` disarms).
    func arm(_ mode: String, clientId: String? = nil) async throws {
        var fields = [("mode", mode)]
        if let clientId { fields.append(("client_id", clientId)) }
        let response = try await CurlHTTPClient().send(
            HTTPRequest(
                method: "POST", url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(FormURLEncoding.encode(fields).utf8)))
        guard response.status == 200 else { throw SetupError("POST \(url) mode=\(mode): HTTP \(response.status) \(response.bodyText)") }
    }

    /// How many times the server has served its JWKS.
    func keySetRequests() async throws -> Int {
        Int(try await state()["jwks_requests"]?.numberValue ?? -1)
    }

    /// How many ID tokens `mode` has rewritten.
    func applied(_ mode: String) async throws -> Int {
        Int(try await state()["applied"]?[mode]?.numberValue ?? 0)
    }

    private func state() async throws -> JSONValue {
        let response = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: url))
        guard response.status == 200, let json = JSONValue.parse(response.body) else {
            throw SetupError("GET \(url): HTTP \(response.status) \(response.bodyText)")
        }
        return json
    }
}
