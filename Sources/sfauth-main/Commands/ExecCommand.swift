import ArgumentParser
import SFAuth
import SFAuthCLI
import Glibc

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

    @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if arguments.isEmpty { throw ValidationError("Give the command to run after --, e.g. sfauth exec -- env.") }
    }

    /// The command without the `--` that separates it.
    private var arguments: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func run(in context: CommandContext) async throws {
        let token = try await context.accessToken(account: account)
        var environment = context.childEnvironment
        for (name, value) in TokenVariables.values(for: token) { environment[name] = value }
        Self.become(arguments, environment: environment)
    }

    /// Replaces this process with `arguments` (looked up in `PATH` like a shell does), so the exit
    /// status and every signal are the command's own; returns only to exit when it cannot start.
    private static func become(_ arguments: [String], environment: [String: String]) -> Never {
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        // This thread's blocked signals and anything set to be ignored would carry over into the
        // command: it gets the signal state a shell would give it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE] { signal(number, SIG_DFL) }
        var code = ENOENT
        for candidate in candidates(for: arguments[0], path: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin") {
            execve(candidate, argv, envp)
            // Keep looking past a directory where it is missing; remember any other reason.
            if errno != ENOENT && errno != ENOTDIR { code = errno }
        }
        StandardError.line("sfauth: cannot run \(TerminalText.escaped(arguments[0])): \(String(cString: strerror(code))).")
        Glibc.exit(code == ENOENT ? 127 : 126)
    }

    /// Where a shell would look for `name`: the name itself when it has a `/`, else each `PATH` entry.
    private static func candidates(for name: String, path: String) -> [String] {
        if name.contains("/") { return [name] }
        return path.split(separator: ":", omittingEmptySubsequences: false).map { ($0.isEmpty ? "." : String($0)) + "/" + name }
    }
}
