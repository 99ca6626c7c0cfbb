import Foundation
import SFAuth
import Synchronization
import Testing

/// The coordinator's own logic with the real listener and file store, a "browser" that follows the
/// redirect over a real socket, and a scripted token endpoint (`FakeHTTPClient`, in process).
@Suite struct OAuthCoordinatorTests {
    let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token")
    let store: FileCredentialStore

    init() {
        store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-coord-" + UUID().uuidString)
    }

    func coordinator(
        browser: RedirectingBrowser, tokenEndpoint: any HTTPClient, delegate: Recorder,
        scopes: [String] = ["api"]
    ) -> OAuthCoordinator {
        OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: "cli", scopes: scopes),
                timeout: .seconds(20), browserLauncher: browser),
            delegate: delegate, httpClient: tokenEndpoint, store: store,
            clock: TestClock(now: Date(timeIntervalSince1970: 1_000_000)))
    }

    @Test func successStoresCredentialsBeforeDidAuthenticate() async throws {
        let delegate = Recorder(store: store)
        let endpoint = FakeHTTPClient(
            always: .response(
                HTTPResponse(
                    status: 200, headers: ["content-type": "application/json"],
                    body: Array(
                        #"{"access_token":"at-1","token_type":"Bearer","expires_in":"7200","refresh_token":"rt-1","scope":"api"}"#.utf8))))
        let credentials = try await coordinator(browser: RedirectingBrowser(), tokenEndpoint: endpoint, delegate: delegate).authenticate()

        #expect(credentials.accessToken == "at-1")
        #expect(credentials.expiresAt == Date(timeIntervalSince1970: 1_007_200))
        #expect(delegate.events == ["willBegin", "willOpenBrowser", "didReceiveAuthorizationCode", "didAuthenticate(stored)"])
        // The exchange carried the code from the redirect and the PKCE verifier.
        let body = try #require(endpoint.requests.first).bodyText
        #expect(body.hasPrefix("grant_type=authorization_code&code=the-code%3D%3D&redirect_uri=http%3A%2F%2F127.0.0.1%3A"))
        #expect(body.contains("&code_verifier="))
        #expect(try store.loadDefault() == credentials)
    }

    @Test(arguments: [
        (
            FakeHTTPClient.Reply.response(
                HTTPResponse(
                    status: 400, headers: ["content-type": "application/json"],
                    body: Array(#"{"error":"invalid_grant","error_description":"invalid code verifier"}"#.utf8))),
            OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant", description: "invalid code verifier", httpStatus: 400))
        ),
        (
            .failure(HTTPTransportError(kind: .connect, message: "could not connect to idp.example:443")),
            OAuthError.network("could not connect to idp.example:443")
        ),
        (
            .response(HTTPResponse(status: 200, body: Array("<html><title>Login</title></html>".utf8))),
            OAuthError.invalidServerResponse(
                "the token endpoint https://idp.example/token answered HTTP 200 with an HTML page (title: Login) instead of a JSON object")
        ),
    ])
    func failedExchangeStoresNothingAndTellsTheDelegate(reply: FakeHTTPClient.Reply, expected: OAuthError) async throws {
        let delegate = Recorder(store: store)
        let browser = RedirectingBrowser()
        let coordinator = coordinator(browser: browser, tokenEndpoint: FakeHTTPClient(always: reply), delegate: delegate)
        await #expect(throws: expected) { try await coordinator.authenticate() }
        #expect(delegate.events == ["willBegin", "willOpenBrowser", "didReceiveAuthorizationCode", "didFail(\(expected))"])
        #expect(try store.identifiers().isEmpty)
        // The browser was sent to the failure page, which shows the error.
        let page = try #require(await browser.finalPage())
        #expect(page.contains("Sign-in failed") || page.lowercased().contains("failed"))
    }

    func signIn(
        to server: AuthorizationServer, browser: RedirectingBrowser = RedirectingBrowser(),
        endpoint: any HTTPClient
    ) async throws(OAuthError) -> OAuthCredentials {
        try await OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: "cli"), timeout: .seconds(20),
                browserLauncher: browser),
            delegate: nil, httpClient: endpoint, store: store, clock: TestClock(now: Date(timeIntervalSince1970: 1_000_000))
        )
        .authenticate()
    }

    @Test func signInsWhoseUserIsUnknownNeverReplaceOrRevokeEachOther() async throws {
        // No ID token, no userinfo: the server never says who signed in.
        var revoking = server
        revoking.revocationEndpoint = "https://idp.example/revoke"
        let endpoint = FakeHTTPClient(always: .response(HTTPResponse(status: 200, body: Array(#"{"access_token":"at","refresh_token":"rt"}"#.utf8))))
        let first = try await signIn(to: revoking, endpoint: endpoint)
        let second = try await signIn(to: revoking, endpoint: endpoint)
        #expect(!first.isIdentified && !second.isIdentified)
        #expect(try store.identifiers() == ["idp.example/unidentified-1", "idp.example/unidentified-2"])
        #expect(try store.defaultIdentifier() == "idp.example/unidentified-2")
        // Nothing was revoked: only the two code exchanges reached the server.
        #expect(endpoint.requests.map(\.url) == [server.tokenEndpoint, server.tokenEndpoint])
    }

    @Test func aServerGivenByItsEndpointsIsHeldToTheIssuerItFirstNamed() async throws {
        // The token response doubles as the userinfo answer, which names the user.
        var withUserinfo = server
        withUserinfo.userinfoEndpoint = "https://idp.example/userinfo"
        let endpoint = FakeHTTPClient(
            always: .response(
                HTTPResponse(
                    status: 200, headers: ["content-type": "application/json"],
                    body: Array(#"{"access_token":"at","sub":"alice"}"#.utf8))))
        let first = try await signIn(to: withUserinfo, browser: RedirectingBrowser(issuer: "https://idp.example"), endpoint: endpoint)
        #expect(first.identifier == "idp.example/alice")
        #expect(first.authorizationResponseIssuer == "https://idp.example")
        // The same issuer again: fine.
        _ = try await signIn(to: withUserinfo, browser: RedirectingBrowser(issuer: "https://idp.example"), endpoint: endpoint)
        let stored = try store.load(identifier: "idp.example/alice")
        // Another issuer, or none, for the same account: refused, and the account stays as it was.
        for browser in [RedirectingBrowser(issuer: "https://evil.example"), RedirectingBrowser()] {
            let error = await #expect(throws: OAuthError.self) { try await signIn(to: withUserinfo, browser: browser, endpoint: endpoint) }
            #expect(error?.description.contains("earlier sign-ins named 'https://idp.example'") == true, "\(String(describing: error))")
            #expect(try store.load(identifier: "idp.example/alice") == stored)
        }
    }

    @Test func launchFailureShowsTheURLAndKeepsWaiting() async throws {
        let delegate = Recorder(store: store)
        let endpoint = FakeHTTPClient(always: .response(HTTPResponse(status: 200, body: Array(#"{"access_token":"at"}"#.utf8))))
        let browser = RedirectingBrowser(failLaunch: true)
        _ = try await coordinator(browser: browser, tokenEndpoint: endpoint, delegate: delegate).authenticate()
        #expect(
            delegate.events == [
                "willBegin", "willOpenBrowser", "browserNotOpened(launchFailed)", "didReceiveAuthorizationCode",
                "didAuthenticate(stored)",
            ])
    }

    @Test func accessTokenRefreshesAndTellsTheDelegate() async throws {
        try seedExpiredCredentials()
        let delegate = Recorder(store: store)
        let endpoint = FakeHTTPClient(always: .response(HTTPResponse(status: 200, body: Array(#"{"access_token":"at-2","expires_in":600}"#.utf8))))
        let credentials = try await coordinator(browser: RedirectingBrowser(), tokenEndpoint: endpoint, delegate: delegate).accessToken()
        #expect(credentials.accessToken == "at-2")
        #expect(credentials.refreshToken == "rt-1")
        #expect(delegate.events == ["willBegin", "didAuthenticate(stored)"])
        #expect(delegate.authTypes == [.refresh, .refresh])
    }

    @Test func rejectedRefreshWithoutInteractionIsLoginRequiredAndTheDelegateHearsIt() async throws {
        try seedExpiredCredentials()
        let delegate = Recorder(store: store)
        let endpoint = FakeHTTPClient(always: .response(HTTPResponse(status: 400, body: Array(#"{"error":"invalid_grant"}"#.utf8))))
        let coordinator = coordinator(browser: RedirectingBrowser(), tokenEndpoint: endpoint, delegate: delegate)
        let error = await #expect(throws: OAuthError.self) { try await coordinator.accessToken(interactive: false) }
        #expect(error?.recovery == .logInAgain)
        #expect(delegate.events.count == 2)
        #expect(delegate.events.last?.contains("no longer valid") == true)
        #expect(try store.loadDefault()?.needsLogin == true)
    }

    @Test func rejectedRefreshFallsBackToTheBrowserWhenInteractive() async throws {
        try seedExpiredCredentials()
        let delegate = Recorder(store: store)
        let credentials = try await coordinator(browser: RedirectingBrowser(), tokenEndpoint: Self.refusingRefreshesGrantingCodes, delegate: delegate)
            .accessToken()
        #expect(credentials.accessToken == "browser-at")
        #expect(delegate.authTypes.first == .refresh)
        #expect(delegate.authTypes.last == .browser)
        #expect(try store.loadDefault()?.needsLogin == false)
    }

    /// Answers the refresh grant with invalid_grant and the code grant with a token.
    static var refusingRefreshesGrantingCodes: FakeHTTPClient {
        FakeHTTPClient()
            .on(.grantType("refresh_token"), reply: .plain(400, #"{"error":"invalid_grant"}"#))
            .on(.any, reply: .plain(200, #"{"access_token":"browser-at","expires_in":600}"#))
    }

    func seedExpiredCredentials() throws {
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "cli"), redirectURI: "http://127.0.0.1:1/cb",
            state: "s", pkce: PKCE(verifier: "v"), nonce: nil)
        try store.save(
            OAuthCredentials(
                response: TokenResponse(accessToken: "at-1", expiresIn: 1, refreshToken: "rt-1"),
                request: request, now: Date(timeIntervalSince1970: 0)))
    }

    @Test func responseFromAnotherIssuerIsRefusedBeforeTheExchange() async throws {
        let delegate = Recorder(store: store)
        let endpoint = FakeHTTPClient(always: .response(HTTPResponse(status: 200, body: Array(#"{"access_token":"at"}"#.utf8))))
        var server = server
        server.issuer = "https://idp.example"
        let browser = RedirectingBrowser(issuer: "https://attacker.example")
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: "cli"),
                timeout: .seconds(20), browserLauncher: browser),
            delegate: delegate, httpClient: endpoint, store: store)
        let error = await #expect(throws: OAuthError.self) { try await coordinator.authenticate() }
        #expect(error?.description.contains("RFC 9207") == true)
        #expect(endpoint.requests.isEmpty)  // the code was never exchanged
        #expect(!delegate.events.contains("didReceiveAuthorizationCode"))
        #expect(try store.identifiers().isEmpty)
        #expect(try #require(await browser.finalPage()).contains("RFC 9207"))
    }

    @Test func insecureTokenEndpointFailsBeforeAnythingOpens() async throws {
        let delegate = Recorder(store: store)
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "http://idp.example/t"),
                client: ClientConfiguration(clientId: "cli"), browserLauncher: RedirectingBrowser()),
            delegate: delegate, httpClient: FakeHTTPClient(always: .failure(HTTPTransportError(kind: .other, message: "unused"))))
        let error = await #expect(throws: OAuthError.self) { try await coordinator.authenticate() }
        #expect(error?.recovery == .fixConfiguration)
        #expect(delegate.events.count == 2)  // willBegin, didFail
    }
}

// MARK: - Test doubles at the seams

/// Plays the browser: on `open`, requests the redirect URI with the URL's `state` and a fixed code,
/// follows the listener's 303 to its result page, and keeps that page.
final class RedirectingBrowser: BrowserLauncher, @unchecked Sendable {
    private let failLaunch: Bool
    private let issuer: String?
    private let page = Mutex<Task<String?, Never>?>(nil)

    init(failLaunch: Bool = false, issuer: String? = nil) {
        self.failLaunch = failLaunch
        self.issuer = issuer
    }

    func open(_ url: String) throws {
        let query = Substring(url.split(separator: "?", maxSplits: 1)[1])
        let parameters = Dictionary(FormURLEncoding.parse(query)!.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        let callback =
            parameters["redirect_uri"]! + "?code=the-code%3D%3D&state=" + FormURLEncoding.encode(parameters["state"]!)
            + (issuer.map { "&iss=" + FormURLEncoding.encode($0) } ?? "")
        let task = Task<String?, Never> {
            let client = CurlHTTPClient()
            guard let redirect = try? await client.send(HTTPRequest(method: "GET", url: callback)),
                redirect.status == 303, let location = redirect.headers["location"]
            else { return nil }
            let origin = String(callback.prefix(while: { $0 != "/" })) + "//" + callback.dropFirst(7).prefix(while: { $0 != "/" })
            let target = location.hasPrefix("/") ? origin + location : location
            return try? await client.send(HTTPRequest(method: "GET", url: target)).bodyText
        }
        page.withLock { $0 = task }
        if failLaunch { throw BrowserLaunchError(message: "no browser here") }
    }

    func finalPage() async -> String? { await page.withLock { $0 }?.value }
}

/// Records delegate callbacks; on success also whether the credentials were already stored.
final class Recorder: OAuthCoordinatorDelegate, @unchecked Sendable {
    private let store: FileCredentialStore
    private let recorded = Mutex<[String]>([])
    private let types = Mutex<[AuthType]>([])

    init(store: FileCredentialStore) { self.store = store }

    var events: [String] { recorded.withLock { $0 } }
    var authTypes: [AuthType] { types.withLock { $0 } }
    private func record(_ event: String) { recorded.withLock { $0.append(event) } }

    func oauthCoordinator(_ c: OAuthCoordinator, willBeginAuthenticationWith info: AuthInfo) {
        types.withLock { $0.append(info.authType) }
        record("willBegin")
    }
    func oauthCoordinator(_ c: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String, info: AuthInfo) -> BrowserPresentation {
        record("willOpenBrowser")
        return .openBrowser
    }
    func oauthCoordinator(_ c: OAuthCoordinator, browserNotOpenedFor url: String, reason: BrowserNotOpenedReason, info: AuthInfo) {
        if case .launchFailed = reason { record("browserNotOpened(launchFailed)") } else { record("browserNotOpened(disabled)") }
    }
    func oauthCoordinator(_ c: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo) { record("didReceiveAuthorizationCode") }
    func oauthCoordinator(_ c: OAuthCoordinator, didReceiveDeviceAuthorization authorization: DeviceAuthorization, info: AuthInfo) {
        types.withLock { $0.append(info.authType) }
        record("didReceiveDeviceAuthorization(\(authorization.userCode))")
    }
    func oauthCoordinator(_ c: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {
        types.withLock { $0.append(info.authType) }
        let stored = (try? store.load(identifier: credentials.identifier)) ?? nil
        record(stored == credentials ? "didAuthenticate(stored)" : "didAuthenticate(not stored)")
    }
    func oauthCoordinator(_ c: OAuthCoordinator, didFailWith error: OAuthError, info: AuthInfo) { record("didFail(\(error))") }
}
