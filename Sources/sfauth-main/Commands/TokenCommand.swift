import ArgumentParser
import SFAuth
import SFAuthCLI
import FoundationEssentials

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
              curl -H "Authorization: Bearer $(sfauth token)" "$URL"
              eval "$(sfauth token --env)"
              curl -H "Authorization: Bearer $SF_ACCESS_TOKEN" "$SF_INSTANCE_URL/services/"
              sfauth token --account work --json
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Flag(help: "Refresh the token even if it looks valid (e.g. after the API rejected it).")
    var refresh = false

    @Flag(help: "Print JSON: access_token, token_type, expires_at, instance_url, account, username.")
    var json = false

    @Flag(help: "Print shell lines that export SF_ACCESS_TOKEN, SF_INSTANCE_URL and SF_USERNAME (or unset those the account lacks).")
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

    /// Prints the token on stdout, or one line on stderr; returns the exit status.
    private static func printToken(account: String?, forceRefresh: Bool, output: TokenOutput,
                                   environment: [String: String]) async -> ExitStatus {
        if let status = printSuppliedToken(output: output, environment: environment) { return status }
        do throws(OAuthError) {
            let (store, source) = try AccountTokens.source(environment: environment)
            let identifier = try AccountTokens.identifier(account, in: store)
            let credentials = try await source.credentials(account: identifier, forceRefresh: forceRefresh)
            print(output.render(credentials, expiry: credentials.expiry(assumedLifetime: source.assumedLifetime)))
            return .success
        } catch {
            return AccountTokens.fail(error)
        }
    }

    /// Prints `SFAUTH_ACCESS_TOKEN` when it is set (it wins over anything stored); `nil` when it is not.
    private static func printSuppliedToken(output: TokenOutput, environment: [String: String]) -> ExitStatus? {
        guard let supplied = SFAuthEnvironment.suppliedToken(environment) else { return nil }
        print(output.render(accessToken: supplied.accessToken, instanceURL: supplied.instanceURL))
        return .success
    }
}
