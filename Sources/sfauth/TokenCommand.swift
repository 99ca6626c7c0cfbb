import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `sfauth token`: prints the stored access token for scripts.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print the stored access token (and nothing else) on standard output.",
        discussion: """
            Reads the default account's credentials without any network I/O. When there are none, or \
            the access token has expired, it prints why on standard error and exits with 3 (login required).

            Examples:
              curl -H "Authorization: Bearer $(sfauth token)" https://example.my.salesforce.com/services/data/
              TOKEN=$(sfauth token) || sfauth login
            """
    )

    func run() throws {
        let status = Self.printToken(environment: ProcessInfo.processInfo.environment)
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// Answers `sfauth token` with no options before any argument parsing; `nil` for anything else.
    static func runFastPath(arguments: [String]) -> Int32? {
        guard arguments == ["token"] else { return nil }
        return printToken(environment: ProcessInfo.processInfo.environment).rawValue
    }

    /// Prints the token and a newline on stdout, or one line on stderr; returns the exit status.
    private static func printToken(environment: [String: String]) -> ExitStatus {
        do throws(OAuthError) {
            let store = try FileCredentialStore(environment: environment)
            let credentials = try StoredToken.current(in: store, now: Date())
            print(credentials.accessToken)
            return .success
        } catch {
            StandardError.line("sfauth: \(error.description)")
            return ExitStatus(error)
        }
    }
}
