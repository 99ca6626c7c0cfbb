import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `sfauth token`: prints a usable access token for scripts, refreshing it when needed.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token (and nothing else) on standard output.",
        discussion: """
            Prints the stored access token while it is valid, without any network request. When it has \
            expired (or expires within SFAUTH_TOKEN_LEEWAY seconds, default 60) it is refreshed with the \
            refresh token first; concurrent sfauth processes share one refresh. Servers that do not say \
            when tokens expire (Salesforce) are assumed to keep them for SFAUTH_ASSUMED_TOKEN_LIFETIME \
            seconds (default 7200, Salesforce's default session timeout); use --refresh after an API \
            rejected the token. It never opens a browser: when a login is needed it exits with 3.

            SFAUTH_ACCESS_TOKEN (and SFAUTH_INSTANCE_URL), when set, are printed instead of anything stored.

            Examples:
              curl -H "Authorization: Bearer $(sfauth token)" https://acme.my.salesforce.com/services/data/
              eval "$(sfauth token --env)"; curl -H "Authorization: Bearer $SF_ACCESS_TOKEN" "$SF_INSTANCE_URL/services/data/"
              sfauth token --account work --json
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Flag(help: "Refresh the token even if it looks valid (e.g. after the API rejected it).")
    var refresh = false

    @Flag(help: "Print JSON: access_token, token_type, expires_at, instance_url, account, username.")
    var json = false

    @Flag(help: "Print shell 'export' lines: SF_ACCESS_TOKEN, SF_INSTANCE_URL, SF_USERNAME.")
    var env = false

    func validate() throws {
        if json && env { throw ValidationError("Give --json or --env, not both.") }
    }

    func run() async throws {
        let output: TokenOutput = json ? .json : env ? .shell : .bare
        let status = await Self.printToken(account: account, forceRefresh: refresh, output: output,
                                           environment: ProcessInfo.processInfo.environment)
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// Answers `sfauth token` without options before any argument parsing, synchronously, when the
    /// stored token is usable (or no refresh can help). `nil` when the full command must run: other
    /// arguments, or a token that needs a refresh.
    static func runFastPath(arguments: [String]) -> Int32? {
        guard arguments == ["token"] else { return nil }
        let environment = ProcessInfo.processInfo.environment
        if let supplied = EnvironmentToken.read(from: environment) {
            print(supplied.accessToken)
            return ExitStatus.success.rawValue
        }
        do throws(OAuthError) {
            let store = try FileCredentialStore(environment: environment)
            let source = TokenSource(store: store, options: try TokenSource.Options(environment: environment))
            guard let credentials = try source.usableStoredCredentials() else { return nil }
            print(credentials.accessToken)
            return ExitStatus.success.rawValue
        } catch {
            StandardError.line("sfauth: \(error.description)")
            return ExitStatus(error).rawValue
        }
    }

    /// Prints the token on stdout, or one line on stderr; returns the exit status.
    private static func printToken(account: String?, forceRefresh: Bool, output: TokenOutput,
                                   environment: [String: String]) async -> ExitStatus {
        if let supplied = EnvironmentToken.read(from: environment) {
            print(output.render(accessToken: supplied.accessToken, instanceURL: supplied.instanceURL))
            return .success
        }
        do throws(OAuthError) {
            let store = try StorageMode(environment: environment).store(environment: environment, signingIn: false).store
            let source = TokenSource(store: store, options: try TokenSource.Options(environment: environment))
            var identifier: String?
            if let account { identifier = try AccountResolver(store: store).identifier(for: account) }
            let credentials = try await source.credentials(account: identifier, forceRefresh: forceRefresh)
            print(output.render(credentials, expiry: credentials.expiry(assumedLifetime: source.assumedLifetime)))
            return .success
        } catch {
            StandardError.line("sfauth: \(error.description)")
            return ExitStatus(error)
        }
    }
}
