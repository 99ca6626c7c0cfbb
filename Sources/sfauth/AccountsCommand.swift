import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `sfauth accounts`: lists the stored accounts.
struct AccountsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts",
        abstract: "List the stored accounts and whether their tokens are usable.",
        discussion: """
            States: valid; expired-refreshable (sfauth token will refresh it); login-required (run sfauth login). \
            The default account is marked with '*'. Makes no network request.

            Examples:
              sfauth accounts
              sfauth accounts --json | jq -r '.[] | select(.default) | .username'
            """
    )

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        do throws(OAuthError) {
            let store = try StoreSetup.existingAccounts()
            let source = TokenSource(store: store, options: try TokenSource.Options(environment: environment))
            let accounts = try AccountSummary.list(store: store, tokenSource: source)
            if json {
                print(JSONOutput.render(accounts, fallback: "[]"))
            } else if accounts.isEmpty {
                StandardError.line("No accounts. Run `sfauth login` to add one.")
            } else {
                print(table(accounts))
            }
        } catch {
            throw CommandFailure(error)
        }
    }

    private func table(_ accounts: [AccountSummary]) -> String {
        let rows = [["", "ALIAS", "USERNAME", "SERVER", "STATE"]] + accounts.map {
            [$0.isDefault ? "*" : "", $0.alias?.terminalSafe ?? "-", $0.username?.terminalSafe ?? "-", $0.server.terminalSafe, $0.state.rawValue]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1) }.joined(separator: "  ").trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }
}
