import Foundation
import SFAuth
import Testing

/// The library's coordinator against the real test server, with a real headless Chromium launched
/// through the product's own `xdg-open` → `$BROWSER` path.
@Suite(.serialized) struct BrowserLoginTests {
    @Test func loginCompletesAndTokensWork() async throws {
        let env = try TestEnvironment()
        let directory = try TestEnvironment.temporaryDirectory()
        let log = directory + "/browser.json"
        let store = FileCredentialStore(directory: directory + "/store")
        let delegate = RecordingDelegate()
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: try env.server,
                client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID"), scopes: ["openid", "profile", "email"]),
                timeout: .seconds(60),
                browserLauncher: SystemBrowserLauncher(environment: try env.browserEnvironment(forge: true, log: log))),
            delegate: delegate, store: store)

        let credentials = try await coordinator.authenticate()

        #expect(delegate.events == ["willBegin(browser)", "willOpenBrowser", "didReceiveAuthorizationCode", "didAuthenticate"])
        #expect(!credentials.accessToken.isEmpty)
        #expect(credentials.refreshToken != nil)
        #expect(credentials.idToken != nil)
        #expect(credentials.expiresAt != nil)
        #expect(credentials.username == (try env.value("SFAUTH_TEST_USERNAME")))
        #expect(credentials.userId == "1")
        #expect(try store.loadDefault() == credentials)

        // The authorization URL carried PKCE S256, a state and a nonce.
        let url = try #require(delegate.authorizationURL)
        #expect(url.contains("code_challenge_method=S256"))
        #expect(url.contains("&state="))
        #expect(url.contains("&nonce="))

        // The forged callback (wrong state) sent before the real login was rejected, and the login still completed.
        let report = try await TestEnvironment.browserReport(at: log)
        #expect(report["forged_status"]?.numberValue == 400)
        #expect(report["ok"] == .bool(true))
        #expect(report["page_text"]?.stringValue?.contains("signed in") == true)

        // The server accepts the access token.
        let userinfo = try await CurlHTTPClient().send(
            HTTPRequest(
                method: "GET", url: try env.value("SFAUTH_TEST_USERINFO_URL"),
                headers: [("Authorization", "Bearer \(credentials.accessToken)")]))
        #expect(userinfo.status == 200)
        let claims = try #require(JSONValue.parse(userinfo.body))
        #expect(claims["sub"]?.stringValue == credentials.userId)
    }

    @Test func denyingConsentFailsWithAccessDeniedAndStoresNothing() async throws {
        let env = try TestEnvironment()
        let directory = try TestEnvironment.temporaryDirectory()
        let store = FileCredentialStore(directory: directory + "/store")
        let delegate = RecordingDelegate()
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: try env.server,
                client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID"), scopes: ["read"]),
                timeout: .seconds(60),
                browserLauncher: SystemBrowserLauncher(environment: try env.browserEnvironment(action: "deny", log: directory + "/b.json"))),
            delegate: delegate, store: store)

        let error = await #expect(throws: OAuthError.self) { try await coordinator.authenticate() }
        guard case .authorizationDenied(let serverError) = error else {
            Issue.record("expected authorizationDenied, got \(String(describing: error))")
            return
        }
        #expect(serverError.code == "access_denied")
        #expect(delegate.events.first == "willBegin(browser)")
        #expect(delegate.events.last?.hasPrefix("didFail(") == true)
        #expect(!delegate.events.contains("didReceiveAuthorizationCode"))
        #expect(try store.identifiers().isEmpty)
        let report = try await TestEnvironment.browserReport(at: directory + "/b.json")
        #expect(report["page_text"]?.stringValue?.contains("access_denied") == true)
    }

    @Test func timeoutEndsTheFlowAndClosesTheListener() async throws {
        let env = try TestEnvironment()
        let delegate = RecordingDelegate(presentation: .handledByDelegate)
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: try env.server, client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID")),
                timeout: .seconds(1), browserLauncher: nil),
            delegate: delegate)

        let started = Date()
        await #expect(throws: OAuthError.self) { try await coordinator.authenticate() }
        #expect(Date().timeIntervalSince(started) < 10)
        let redirect = try #require(delegate.authorizationURL.flatMap(redirectURI(in:)))
        // Nobody listens there any more: the connection is refused.
        await #expect(throws: HTTPTransportError.self) {
            _ = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: redirect))
        }
        #expect(delegate.events.last?.contains("Timed out after 1 s. No redirect arrived.") == true)
        // No scope was asked for: the likely cause is named too (issue 17 §9).
        #expect(delegate.events.last?.contains("No scope was asked for, and some servers refuse a request without one.") == true)
    }

    @Test func cancelEndsTheFlow() async throws {
        let env = try TestEnvironment()
        let delegate = RecordingDelegate(presentation: .handledByDelegate)
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: try env.server, client: ClientConfiguration(clientId: try env.value("SFAUTH_TEST_CLIENT_ID")),
                timeout: .seconds(60), browserLauncher: nil),
            delegate: delegate)
        let task = Task { try await coordinator.authenticate() }
        try await Task.sleep(for: .milliseconds(300))
        coordinator.cancel()
        let result = await task.result
        #expect(throws: OAuthError.cancelled) { try result.get() }

        // Swift task cancellation works the same way.
        let second = Task { try await coordinator.authenticate() }
        try await Task.sleep(for: .milliseconds(300))
        second.cancel()
        await #expect(throws: OAuthError.cancelled) { try await second.value }
    }

    private func redirectURI(in url: String) -> String? {
        guard let query = url.split(separator: "?", maxSplits: 1).last,
            let pairs = FormURLEncoding.parse(query)
        else { return nil }
        return pairs.first(where: { $0.name == "redirect_uri" })?.value
    }
}
