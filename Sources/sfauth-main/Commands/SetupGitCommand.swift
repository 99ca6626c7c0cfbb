import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth setup-git`: configures git to get passwords for a host from `sfauth git-credential`.
struct SetupGitCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "setup-git",
        abstract: "Configure git to use sfauth's access token as the password for a host.",
        discussion: """
            Writes two values of credential.<url>.helper in your global git configuration (or --file): \
            an empty one, so helpers configured for every host (store, cache) are not asked for this one, \
            then !'<this sfauth>' 'git-credential' '--account' '<identifier>' '--host' '<url>'. The account \
            (--account, else the default one now) is written by its identifier, which no alias or later \
            sign-in can take over. Running it again replaces them. git then sends the account's access token (refreshed when needed) as the \
            password, and the account's username (else oauth2) as the username. Plain http is for local \
            servers only: git sends the token in the clear there.

            Examples:
              sfauth setup-git --host git.example --account work
              sfauth setup-git --host http://127.0.0.1:8080
              sfauth setup-git --host git.example --file ./gitconfig
            """
    )

    @Option(help: ArgumentHelp("The host: host[:port], or a URL https://host[:port] (http://… too).", valueName: "host"))
    var host: String

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account now.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("The scheme for a --host given without one: https or http.", valueName: "scheme"))
    var scheme = "https"

    @Option(help: ArgumentHelp("Write this git config file instead of the global one.", valueName: "path"))
    var file: String?

    func run(in context: CommandContext) throws {
        let target = try GitCredential.Host(parsing: host, defaultScheme: scheme)
        let chosen = try context.accounts().store.accountForConfiguration(named: account)
        let helper = GitCredential.helperValue(
            executable: context.executablePath,
            arguments: ["git-credential", "--account", chosen.identifier, "--host", target.url])
        let key = "credential.\(target.url).helper"
        let scope = file.map { ["--file", $0] } ?? ["--global"]
        // git has no business with sfauth's secrets.
        let environment = context.childEnvironment
        _ = ChildCommand.run(["git", "config"] + scope + ["--unset-all", key], environment: environment)  // absent the first time: fine
        for value in ["", helper] {
            let status = ChildCommand.run(["git", "config"] + scope + ["--add", key, value], environment: environment)
            guard status == 0 else {
                throw CommandFailure(usage: status == 127 ? "git is not installed (or not on the PATH)" : "git config failed (status \(status))")
            }
        }
        print(
            "git now asks sfauth for \(target.url), with the account \(TerminalText.escaped(chosen.displayLabel)) "
                + "(\(key) in \(file ?? "your global git configuration")).")
    }
}
