import ArgumentParser
import Glibc
import SFAuth
import SFAuthCLI

/// The root command: `sfauth <subcommand>`.
struct SFAuthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sfauth",
        abstract: "Browser login for command-line programs: sign in once, then get tokens in scripts.",
        discussion: """
            Salesforce is the default provider; any OAuth 2.0 / OpenID Connect server works with \
            --issuer (or --authorize-url and --token-url), or from a profile of the configuration file \
            (see sfauth config).

            Examples:
              sfauth login                      # sign in to Salesforce in your browser
              curl -H "Authorization: Bearer $(sfauth token)" "$URL"
              sfauth logout

            Exit codes: 0 success, 1 credential store error, 2 usage or configuration error, \
            3 login required (the message names the command that signs you in again), 4 cancelled or timed out, 5 refused by the server, 6 network or server failure; sfauth request: 7 an HTTP 4xx, 8 an HTTP 5xx; \
            9 a local failure (the login's listener could not get a socket, poll or a thread).
            """,
        version: "0.1.0",  // = the file VERSION; scripts/build-release refuses to build when they differ
        subcommands: [
            LoginCommand.self, TokenCommand.self, AccountsCommand.self, UseCommand.self, WhoamiCommand.self,
            LogoutCommand.self, ConfigCommand.self, ExecCommand.self, RequestCommand.self,
            KubeCredentialCommand.self, KubeconfigCommand.self, GitCredentialCommand.self, SetupGitCommand.self,
            DockerCredentialCommand.self, SetupDockerCommand.self, ExportCommand.self, DoctorCommand.self, ProxyCommand.self,
        ]
    )

    /// Parses `arguments`, runs the command in `context` and exits with the documented status.
    /// Usage errors exit with 2 (not ArgumentParser's 64), so every usage or configuration problem
    /// shares one code.
    static func run(_ arguments: [String], in context: CommandContext) async -> Never {
        if let unknown = unknownCommand(arguments) {
            let meant = Spelling.suggestion(for: unknown, among: commandNames).map { " did you mean '\($0)'?" } ?? ""
            fail(
                CommandFailure(
                    usage: "there is no command '\(TerminalText.escaped(unknown))';\(meant) the commands are: \(commandNames.joined(separator: ", "))"
                ))
        }
        let command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            refuse(error, arguments: arguments)
        }
        do {
            if let command = command as? SFAuthSubcommand {
                try await command.run(in: context)
            } else {
                var command = command
                try command.run()  // the root alone: its help
            }
            Glibc.exit(ExitStatus.success.rawValue)
        } catch let failure as CommandFailure {
            fail(failure)
        } catch let error as OAuthError {
            fail(CommandFailure(error))
        } catch {
            refuse(error, arguments: arguments)
        }
    }

    /// Ends with `failure`: its line on stderr — one line, whatever a server's words in it contained.
    private static func fail(_ failure: CommandFailure) -> Never {
        if let message = failure.message { StandardError.line("sfauth: \(sentence(TerminalText.escaped(message)))") }
        if let details = failure.details { StandardError.line(details) }
        Glibc.exit(failure.status.rawValue)
    }

    /// Ends with ArgumentParser's verdict on the command line: help and the version as it prints
    /// them; a usage error in sfauth's style — `sfauth: what is wrong.`, then where to read more.
    private static func refuse(_ error: any Error, arguments: [String]) -> Never {
        if exitCode(for: error) == .success { self.exit(withError: error) }  // --help, --version
        if let code = error as? ExitCode { Glibc.exit(code.rawValue) }
        let message = message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? "\(error)"
        StandardError.line("sfauth: \(sentence(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message))")
        let named = arguments.first(where: commandNames.contains).map { "\($0) " } ?? ""
        StandardError.line("See `sfauth \(named)--help`.")
        Glibc.exit(ExitStatus.usage.rawValue)
    }

    /// `text` as a sentence: a final period unless it already ends with punctuation.
    static func sentence(_ text: String) -> String {
        guard let last = text.last, !".?!:".contains(last) else { return text }
        return text + "."
    }

    private static var commandNames: [String] { configuration.subcommands.map { $0._commandName } }

    /// The command asked for when no command is called that — `sfauth NAME …` or `sfauth help NAME`:
    /// a mistake, not a request for help.
    private static func unknownCommand(_ arguments: [String]) -> String? {
        let name = arguments.first == "help" ? arguments.dropFirst().first : arguments.first
        guard let name, !name.hasPrefix("-"), name != "help", !commandNames.contains(name) else { return nil }
        return name
    }
}

/// A subcommand of `sfauth`: parsed by ArgumentParser, then run with the process's context. Its
/// `run(in:)` builds a plan from its options, makes one call, and lets an `OAuthError` or a
/// `CommandFailure` end it with the documented status.
protocol SFAuthSubcommand: ParsableCommand {
    func run(in context: CommandContext) async throws
}
