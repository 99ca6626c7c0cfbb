import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth use`: selects the default account.
struct UseCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "use",
        abstract: "Make an account the default (for sfauth token and logout).",
        discussion: """
            Examples:
              sfauth use work
              sfauth use alice@example.com
            """
    )

    @Argument(help: ArgumentHelp("Alias, username, email or identifier (see sfauth accounts).", valueName: "account"))
    var account: String

    func run(in context: CommandContext) throws {
        let store = try context.accountStore()
        let identifier = try AccountResolver(store: store).identifier(for: account)
        try store.setDefault(identifier)
        let label = (try store.load(identifier: identifier))?.displayLabel ?? identifier
        StandardError.line("The default account is now \(label).")
    }
}
