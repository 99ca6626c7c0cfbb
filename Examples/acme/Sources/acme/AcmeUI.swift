import Glibc
import SFAuth

/// acme's own words for each step of a sign-in, and for errors.
final class AcmeUI: OAuthCoordinatorDelegate, Sendable {
    static let shared = AcmeUI()

    /// A mistake on acme's command line.
    struct Usage: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, willBeginAuthenticationWith info: AuthInfo) {
        if info.authType == .refresh { Self.say("acme: renewing your session…") }
    }

    func oauthCoordinator(
        _ coordinator: OAuthCoordinator, willOpenBrowserAt url: String, redirectURI: String,
        info: AuthInfo
    ) -> BrowserPresentation {
        Self.say("acme: opening your browser to sign in (or open \(url))")
        return .openBrowser
    }

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didAuthenticate credentials: OAuthCredentials, info: AuthInfo) {}

    func oauthCoordinator(_ coordinator: OAuthCoordinator, didFailWith error: OAuthError, info: AuthInfo) {}

    /// One line on stderr.
    static func say(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    /// Says what went wrong and what to do, in acme's words, and exits.
    static func fail(_ error: OAuthError) -> Never {
        say("acme: " + error.description(advising: advice))
        exit(error.recovery == .logInAgain ? 3 : 1)
    }

    /// acme's commands for what helps.
    static func advice(_ remedy: Remedy) -> String {
        switch remedy {
        case .signIn: return "Run `acme login`."
        case .provideClientSecret: return "Set ACME_CLIENT_SECRET."
        default: return remedy.description
        }
    }
}
