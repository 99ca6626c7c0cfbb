import ArgumentParser
import FoundationEssentials
import SFAuth
import SFAuthCLI

/// `sfauth whoami`: shows who an account belongs to.
struct WhoamiCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami",
        abstract: "Show who the default (or given) account belongs to.",
        discussion: """
            Prints what the server said at sign-in: username, display name, email, user and organization \
            ids, and where API calls go; the state of its token, as sfauth accounts shows it (valid, \
            expired-refreshable, sign-in-due, login-required); when its access token expires ('never' for \
            a GitHub OAuth app's); and, where the server said, when its refresh token expires — when a new \
            sign-in will be needed. Makes no network request. In --json, times are RFC 3339 and null \
            where there is none.

            Examples:
              sfauth whoami
              sfauth whoami work --json
            """
    )

    @Argument(help: ArgumentHelp("Alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    /// The earlier spelling, `--account NAME`, still works.
    @Option(name: .customLong("account"), help: .hidden)
    var accountOption: String?

    func validate() throws {
        if account != nil && accountOption != nil { throw ValidationError("Give the account once.") }
    }

    @Flag(help: "Print JSON.")
    var json = false

    func run(in context: CommandContext) throws {
        let store = try context.accountStore()
        guard let credentials = try store.credentials(of: try store.identifier(selectedBy: account ?? accountOption)) else {
            throw OAuthError.loginRequired("Not signed in. Run `sfauth login` first.")
        }
        let source = TokenSource(store: store, options: try TokenSource.Options(settings: context.settings))
        let state = AccountSummary.State(of: credentials, judgedBy: source)
        let expiry = credentials.accessTokenNeverExpires ? nil : credentials.expiry(assumedLifetime: source.options.assumedLifetime)
        let refreshExpiry = credentials.hasRefreshToken ? credentials.refreshTokenExpiry : nil
        let fields: [(String, String?)] = [
            ("username", credentials.username), ("name", credentials.displayName), ("email", credentials.email),
            ("user_id", credentials.userId), ("organization_id", credentials.organizationId),
            ("instance_url", credentials.instanceURL), ("server", credentials.server.issuer ?? credentials.server.tokenEndpoint),
            ("resource", credentials.resource),
            ("alias", credentials.alias), ("account", credentials.identifier), ("state", state.rawValue),
            ("expires", json ? expiry?.rfc3339 : expiry?.minuteInUTC ?? "never"),
            ("refresh_token_expires", json ? refreshExpiry?.date?.rfc3339 : refreshExpiry.map { Self.describe($0, now: Date()) }),
        ]
        if json {
            var object = Dictionary(uniqueKeysWithValues: fields.map { ($0.0, $0.1.map(JSONValue.string) ?? .null) })
            object["version"] = .number(1)
            print(JSONOutput.render(object))
        } else {
            let width = fields.map(\.0.count).max() ?? 0
            print(fields.compactMap { name, value in value.map { "\(name.padding(toLength: width))  \($0.terminalSafe)" } }.joined(separator: "\n"))
        }
    }

    /// A refresh token's expiry for people: its time, with what it means, or that it has none.
    private static func describe(_ expiry: RefreshTokenExpiry, now: Date) -> String {
        switch expiry {
        case .at(let date, _) where date <= now: "\(date.minuteInUTC) (expired: sign in again)"
        case .at(let date, _): date.minuteInUTC
        case .noFixedExpiry: "no fixed expiry"
        }
    }
}
