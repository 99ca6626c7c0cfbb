import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth token`: prints a usable access token for scripts, refreshing it when needed.
struct TokenCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a valid access token (and nothing else) on standard output.",
        discussion: """
            Prints the stored access token while it is valid, without any network request. When it has \
            expired (or expires within SFAUTH_TOKEN_LEEWAY seconds, default 60) it is refreshed with the \
            refresh token first; concurrent sfauth processes share one refresh. Servers that do not say \
            when tokens expire (Salesforce) are assumed to keep them for SFAUTH_ASSUMED_TOKEN_LIFETIME \
            seconds (default 7200, Salesforce's default session timeout); use --refresh after an API \
            rejected the token. It never opens a browser: when a login is needed it exits with 3. When the \
            server said the refresh token expires within 7 days, it says so on standard error, once a day \
            per account, so that you can sign in again before then.

            SFAUTH_ACCESS_TOKEN (and SFAUTH_INSTANCE_URL), when set, are printed instead of anything stored.

            Examples:
              curl -H "Authorization: Bearer $(sfauth token)" "$URL"
              eval "$(sfauth token --env)"
              curl -H "Authorization: Bearer $SF_ACCESS_TOKEN" "$SF_INSTANCE_URL/services/"
              sfauth token --account work --json
              sfauth token --resource https://mcp.example/mcp --format headers-json
              sfauth token --scope read                      # a narrower token, kept until it expires
              sfauth token --audience downstream-api         # by token exchange (RFC 8693)
              sfauth token --account work --resource https://api.example/ --min-valid 10m
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "The token of the account bound to this protected resource (sfauth login --resource); with --account A not bound to it, a token for it from A's sign-in (RFC 8707).",
            valueName: "url"))
    var resource: String?

    @Flag(help: "Refresh the token even if it looks valid (e.g. after the API rejected it).")
    var refresh = false

    @OptionGroup(title: "Per-call tokens")
    var targetOptions: TargetOptions

    @Option(
        help: ArgumentHelp(
            "token (the default), json (as --json), env (as --env), or headers-json: {\"Authorization\":\"Bearer …\"} for an MCP client's header helper.",
            valueName: "format"))
    var format: Format?

    /// What `--format` takes.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case token, json, env
        case headersJSON = "headers-json"
    }

    @Flag(help: "Print JSON: access_token, token_type, expires_at, refresh_token_expires_at, instance_url, account, username.")
    var json = false

    @Flag(help: "Print shell lines that export SF_ACCESS_TOKEN, SF_INSTANCE_URL and SF_USERNAME (or unset those the account lacks).")
    var env = false

    func validate() throws {
        if [json, env, format != nil].filter({ $0 }).count > 1 { throw ValidationError("Give one of --json, --env and --format.") }
    }

    /// The format the flags ask for.
    private var output: TokenOutput {
        switch format {
        case .token?: return .bare
        case .json?: return .json
        case .env?: return .shell
        case .headersJSON?: return .headersJSON
        case nil: return json ? .json : env ? .shell : .bare
        }
    }

    func run(in context: CommandContext) async throws {
        let wanted = targetOptions.wanted(forceRefresh: refresh)
        let token = try await context.accessToken(account: account, resource: resource, wanted: wanted)
        print(output.render(token))
        if let notice = context.minimumValidityNotice(for: token, wanted: wanted) { StandardError.line(notice) }
        if let reminder = context.signInReminder(for: token) {
            StandardError.line(reminder)
        }
    }
}
