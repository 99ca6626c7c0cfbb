import Dispatch
import Foundation
import SFAuth
import Synchronization
import Testing

/// The pasted redirect and the listener complete one wait: the first wins, the other is cancelled.
@Suite struct PastedRedirectTests {
    let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token")
    let store = FileCredentialStore(directory: FileManager.default.temporaryDirectory.path + "/sfauth-paste-" + UUID().uuidString)
    let tokens = FakeHTTPClient(always: .json(200, #"{"access_token":"at"}"#))

    func coordinator(browser: any BrowserLauncher, paste: any RedirectURLSource, delegate: Recorder) -> OAuthCoordinator {
        OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: "cli"), timeout: .seconds(20),
                browserLauncher: browser, pastedRedirects: paste),
            delegate: delegate, httpClient: tokens, store: store)
    }

    @Test func aPastedRedirectWinsAndTheListenerIsClosed() async throws {
        let paste = ScriptedPaste()
        let browser = ElsewhereBrowser(paste: paste)
        let delegate = Recorder(store: store)
        let credentials = try await coordinator(browser: browser, paste: paste, delegate: delegate).authenticate()
        #expect(credentials.accessToken == "at")
        #expect(paste.rejectedLines == ["not a redirect"])
        #expect(tokens.requests.first?.bodyText.contains("code=pasted-code") == true)
        // The listener's wait was cancelled: its port is closed.
        let port = try #require(browser.redirectURI.flatMap { URL(string: $0)?.port })
        await #expect(throws: HTTPTransportError.self) {
            _ = try await CurlHTTPClient().send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(port)/favicon.ico"))
        }
    }

    @Test func theListenerWinsAndThePasteWaitIsCancelled() async throws {
        let paste = ScriptedPaste(lines: [])  // nothing is ever pasted: nextLine blocks until released
        defer { paste.release() }
        let delegate = Recorder(store: store)
        let browser = RedirectingBrowser()
        let credentials = try await coordinator(browser: browser, paste: paste, delegate: delegate).authenticate()
        #expect(credentials.accessToken == "at")
        #expect(await browser.finalPage()?.contains("You are signed in") == true)
        #expect(delegate.events.last == "didAuthenticate(stored)")
    }

    @Test func cancelEndsBothWaits() async throws {
        let paste = ScriptedPaste(lines: [])
        defer { paste.release() }
        let delegate = Recorder(store: store)
        let coordinator = coordinator(browser: ElsewhereBrowser(paste: nil), paste: paste, delegate: delegate)
        let flow = Task { try await coordinator.authenticate() }
        while !delegate.events.contains("willOpenBrowser") { try await Task.sleep(for: .milliseconds(10)) }
        let clock = ContinuousClock()
        let started = clock.now
        coordinator.cancel()
        await #expect(throws: OAuthError.cancelled) { try await flow.value }
        #expect(clock.now - started < .seconds(2))
        #expect(delegate.events.last == "didFail(The sign-in was cancelled.)")
    }
}

/// A browser on another machine: it signs in there and the person pastes where it ended up.
final class ElsewhereBrowser: BrowserLauncher, @unchecked Sendable {
    private let paste: ScriptedPaste?
    private let uri = Mutex<String?>(nil)

    init(paste: ScriptedPaste?) { self.paste = paste }

    var redirectURI: String? { uri.withLock { $0 } }

    func open(_ url: String) throws {
        let query = Substring(url.split(separator: "?", maxSplits: 1)[1])
        let parameters = Dictionary(FormURLEncoding.parse(query)!.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        let redirect = parameters["redirect_uri"]!
        uri.withLock { $0 = redirect }
        paste?.type("not a redirect")
        paste?.type(redirect + "?code=pasted-code&state=" + FormURLEncoding.encode(parameters["state"]!))
    }
}

/// Lines "typed" by the test; `nextLine` blocks until one is there or the paste is released.
final class ScriptedPaste: RedirectURLSource, @unchecked Sendable {
    private let lines: Mutex<[String]>
    private let released = Mutex(false)
    private let available = DispatchSemaphore(value: 0)
    private let rejected = Mutex<[String]>([])

    init(lines: [String] = []) { self.lines = Mutex(lines) }

    var rejectedLines: [String] { rejected.withLock { $0 } }

    func type(_ line: String) {
        lines.withLock { $0.append(line) }
        available.signal()
    }

    /// Ends the input: a blocked `nextLine` returns `nil`.
    func release() {
        released.withLock { $0 = true }
        available.signal()
    }

    func nextLine() -> String? {
        while true {
            if let line = lines.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return line }
            if released.withLock({ $0 }) { return nil }
            available.wait()
        }
    }

    func rejected(_ line: String, reason: String) { rejected.withLock { $0.append(line) } }
}
