import Foundation
import SFAuth
import Testing

/// The running test authorization server and headless browser, described by the variables
/// `scripts/test-server start` writes. `scripts/test` sets them; without them these tests fail
/// (they are never silently skipped).
struct TestEnvironment {
    let variables: [String: String]

    init() throws {
        variables = ProcessInfo.processInfo.environment
        guard variables["SFAUTH_TEST_SERVER_URL"] != nil else {
            throw SetupError("SFAUTH_TEST_SERVER_URL is not set: run the end-to-end tests through scripts/test, which starts the test server")
        }
    }

    func value(_ name: String) throws -> String {
        guard let value = variables[name], !value.isEmpty else { throw SetupError("\(name) is not set") }
        return value
    }

    var server: AuthorizationServer {
        get throws {
            AuthorizationServer(
                authorizationEndpoint: try value("SFAUTH_TEST_AUTHORIZE_URL"),
                tokenEndpoint: try value("SFAUTH_TEST_TOKEN_URL"),
                userinfoEndpoint: try value("SFAUTH_TEST_USERINFO_URL"),
                issuer: try value("SFAUTH_TEST_ISSUER"))
        }
    }

    /// The environment for the product's real `xdg-open` path: no display, `BROWSER` = the test browser,
    /// which reports what it saw into `log` (a JSON file).
    func browserEnvironment(action: String = "approve", forge: Bool = false, log: String) throws -> [String: String] {
        var environment = variables
        // No desktop: xdg-open then runs $BROWSER.
        for name in [
            "DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
            "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID",
        ] {
            environment[name] = nil
        }
        environment["BROWSER"] = try value("SFAUTH_TEST_BROWSER")
        environment["SFAUTH_TEST_BROWSER_ACTION"] = action
        environment["SFAUTH_TEST_BROWSER_FORGE"] = forge ? "1" : "0"
        environment["SFAUTH_TEST_BROWSER_LOG"] = log
        return environment
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/sfauth-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Waits (bounded) for the browser's JSON report.
    static func browserReport(at path: String, within seconds: Double = 30) async throws -> [String: JSONValue] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let data = FileManager.default.contents(atPath: path), let json = JSONValue.parse(Array(data)),
                case .object(let members) = json
            {
                return members
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw SetupError("the test browser wrote no report to \(path) within \(seconds) s")
    }
}

struct SetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Records delegate callbacks in the order they arrive.
final class RecordingDelegate: OAuthCoordinatorDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    private(set) var authorizationURL: String?
    private let presentation: BrowserPresentation

    init(presentation: BrowserPresentation = .openBrowser) {
        self.presentation = presentation
    }

    var events: [String] { lock.withLock { recorded } }

    private func record(_ event: String) { lock.withLock { recorded.append(event) } }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, willBeginAuthenticationWith info: AuthInfo) {
        record("willBegin(\(info.authType))")
    }

    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
        info: AuthInfo
    ) -> BrowserPresentation {
        lock.withLock { authorizationURL = url }
        record("willOpenBrowser")
        return presentation
    }

    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, browserNotOpenedFor url: String,
        reason: BrowserNotOpenedReason, info: AuthInfo
    ) {
        record("browserNotOpened(\(reason))")
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didReceiveAuthorizationCodeWith info: AuthInfo) {
        record("didReceiveAuthorizationCode")
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {
        record("didAuthenticate")
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didFailWith error: OAuthError, info: AuthInfo) {
        record("didFail(\(error))")
    }
}
