import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth exec`: runs a command with an account's token in its environment.
struct ExecCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with a valid access token in its environment (never in its arguments).",
        discussion: """
            Sets SF_ACCESS_TOKEN, SF_INSTANCE_URL and SF_USERNAME (as sfauth token --env names them; those \
            the account lacks are unset), renewing the token first when needed, then becomes the command: \
            its exit status and the signals it gets are its own. The command does not inherit \
            SFAUTH_CLIENT_SECRET or SFAUTH_ACCESS_TOKEN. When no token can be had, sfauth exits with its \
            own status (3: sign in first) and the command does not run; 127 when the command is not found.

            Examples:
              sfauth exec -- sh -c 'curl -H "Authorization: Bearer $SF_ACCESS_TOKEN" "$SF_INSTANCE_URL/services/data/"'
              sfauth exec --account work -- python3 sync.py
            """
    )

    @Option(help: ArgumentHelp("The account: alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "The token of the account bound to this protected resource (sfauth login --resource); with --account A not bound to it, a token for it from A's sign-in.",
            valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens")
    var targetOptions: TargetOptions

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        // Help asked for before `--` is help, not a command named --help.
        if command.first == "--help" || command.first == "-h" { throw CleanExit.helpRequest(self) }
        if arguments.isEmpty { throw ValidationError("Give the command to run after --, e.g. sfauth exec -- env.") }
    }

    /// The command without the `--` that separates it.
    private var arguments: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func run(in context: CommandContext) async throws {
        let wanted = targetOptions.wanted()
        let token = try await context.accessToken(account: account, resource: resource, wanted: wanted)
        if let notice = context.minimumValidityNotice(for: token, wanted: wanted) { StandardError.line(notice) }
        CommandLauncher.become(
            arguments,
            environment: CommandEnvironment.forCommand(
                with: token, from: context.environment, secretVariables: context.settings.secretVariables))
    }
}
