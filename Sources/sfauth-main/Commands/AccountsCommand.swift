import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth accounts`: lists the stored accounts.
struct AccountsCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List the stored accounts and whether their tokens are usable.",
        discussion: """
            States: valid; expired-refreshable (sfauth token will renew it); sign-in-due (the refresh token \
            expires within 7 days: sign in again before then); login-required (sfauth login --account NAME \
            signs it in again); unreadable (its file is damaged; the path is shown). SIGN-IN NEEDED is when \
            the refresh token expires, where the server said (GitHub Apps, Keycloak): 'no fixed date' for a \
            refresh token without one, 'never' for a token that does not expire (GitHub OAuth apps). The \
            default account is marked with '*'; NAME selects an account in --account, use and logout. Makes \
            no network request.

            Examples:
              sfauth accounts
              sfauth accounts --json | jq -r '.accounts[] | select(.default) | .username'
            """
    )

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func run(in context: CommandContext) throws {
        let store = try context.accountStore()
        let source = TokenSource(store: store, options: try TokenSource.Options(settings: context.settings))
        let accounts = try AccountSummary.list(store: store, tokenSource: source)
        if json {
            print(JSONOutput.render(AccountsJSON(accounts: accounts)))
        } else if accounts.isEmpty {
            StandardError.line("No accounts. Run `sfauth login` to add one.")
        } else {
            print(table(accounts))
            for account in accounts where account.state == .unreadable {
                StandardError.line(
                    "\(account.file) cannot be read (\(account.problem ?? "unknown")); `sfauth logout --local-only \(account.identifier)` removes it."
                )
            }
        }
    }

    private func table(_ accounts: [AccountSummary]) -> String {
        let rows =
            [["", "NAME", "USER", "SERVER", "STATE", "REFRESH TOKEN", "SIGN-IN NEEDED"]]
            + accounts.map {
                [
                    $0.isDefault ? "*" : "", $0.name.terminalSafe, $0.user?.terminalSafe ?? "-", $0.server.terminalSafe, $0.state.rawValue,
                    $0.refreshToken?.rawValue ?? "-", $0.signInNeeded ?? "-",
                ]
            }
        let widths = (0..<7).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            // The last column is not padded, so a line has no trailing spaces to trim — trimming
            // (`trimmingTrailingSpaces`, by Characters, twice reversed) was a third of the command's
            // time with 2,000 accounts.
            var line = zip(row.dropLast(), widths).map { $0.padding(toLength: $1) }.joined(separator: "  ") + "  " + row[row.count - 1]
            while line.utf8.last == UInt8(ascii: " ") { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }
}

/// `sfauth accounts --json`: `{"version": 1, "accounts": [...]}`.
private struct AccountsJSON: Encodable {
    let version = 1
    var accounts: [AccountSummary]
}
