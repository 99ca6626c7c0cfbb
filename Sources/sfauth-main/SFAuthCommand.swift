import ArgumentParser
import SFAuth
import SFAuthCLI
import Glibc

/// The root command: `sfauth <subcommand>`.
struct SFAuthCommand: AsyncParsableCommand {
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
        subcommands: [LoginCommand.self, TokenCommand.self, AccountsCommand.self, UseCommand.self, WhoamiCommand.self,
                      LogoutCommand.self, ConfigCommand.self, ExecCommand.self, RequestCommand.self,
                      KubeCredentialCommand.self, KubeconfigCommand.self, GitCredentialCommand.self, SetupGitCommand.self,
                      ExportCommand.self, DoctorCommand.self]
    )

    /// Parses the arguments, runs the command and exits with the documented status. Usage errors
    /// exit with 2 (not ArgumentParser's 64), so every usage or configuration problem shares one code.
    static func runAndExit() async -> Never {
        // `sfauth help NAME` for a command that does not exist is a mistake, not a request for help.
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "help", arguments.count > 1, !arguments[1].hasPrefix("-") {
            let names = configuration.subcommands.map { $0._commandName }
            if !names.contains(arguments[1]) {
                StandardError.line("sfauth: there is no command '\(TerminalText.escaped(arguments[1]))'; the commands are: \(names.joined(separator: ", ")).")
                Glibc.exit(ExitStatus.usage.rawValue)
            }
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            Glibc.exit(ExitStatus.success.rawValue)
        } catch let failure as CommandFailure {
            // One line, whatever the server's words in it contained.
            StandardError.line("sfauth: \(sentence(TerminalText.escaped(failure.message)))")
            Glibc.exit(failure.status.rawValue)
        } catch {
            if exitCode(for: error) == .success { self.exit(withError: error) }  // --help, --version
            if let code = error as? ExitCode { Glibc.exit(code.rawValue) }
            // Usage errors in sfauth's own style: `sfauth: what is wrong.`, then where to read more.
            let message = message(for: error).split(whereSeparator: \.isNewline).first.map(String.init) ?? "\(error)"
            StandardError.line("sfauth: \(sentence(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message))")
            StandardError.line("See `sfauth \(helpTarget())--help`.")
            Glibc.exit(ExitStatus.usage.rawValue)
        }
    }

    /// `text` as a sentence: a final period unless it already ends with punctuation.
    static func sentence(_ text: String) -> String {
        guard let last = text.last, !".?!".contains(last) else { return text }
        return text + "."
    }

    /// `login ` when the command line names a known subcommand, else nothing.
    private static func helpTarget() -> String {
        let names = configuration.subcommands.map { $0._commandName }
        return CommandLine.arguments.dropFirst().first(where: names.contains).map { "\($0) " } ?? ""
    }
}
