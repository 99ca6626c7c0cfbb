import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth git-credential get|store|erase`: a git credential helper that answers with the account's
/// access token as the password, for the hosts `sfauth setup-git` configured.
struct GitCredentialCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git credential helper: answer git's 'get' with the account's access token.",
        discussion: """
            git runs this (sfauth setup-git writes the configuration) and writes key=value lines on its \
            standard input. For get, when protocol and host are one of the --host values, it prints \
            username (the account's username, else oauth2), password (the access token, refreshed when \
            needed) and password_expiry_utc; for any other host it prints nothing. store does nothing \
            (the token is stored already). erase, which git sends after a server refused the password, \
            never signs out: when the refused password is the current token it renews the token, so the \
            next git command gets a new one.

            It never opens a browser. When a sign-in is needed it prints one line on standard error with \
            the command to run, answers quit=1 (so git stops instead of asking for a password) and exits 3.

            Examples:
              sfauth setup-git --host git.example --account work
              printf 'protocol=https\\nhost=git.example\\n\\n' | sfauth git-credential --host git.example get
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("A host to answer for: https://host[:port], http://host:port or host[:port] (https); repeatable.", valueName: "host"))
    var host: [String] = []

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "operation"))
    var operation: String

    func validate() throws {
        if host.isEmpty { throw ValidationError("Give the hosts to answer for with --host (sfauth setup-git writes them).") }
    }

    func run(in context: CommandContext) async throws {
        let hosts = try host.map { h throws(OAuthError) in try GitCredential.Host(parsing: h) }
        let attributes = GitCredential.Attributes.readingStandardInput()
        // Another host, or an operation of a newer git: nothing to say.
        guard hosts.contains(where: { $0.matches(attributes) }) else { return }
        switch operation {
        case "get":
            print(try await Self.answer(account: account, in: context), terminator: "")
        case "erase":
            await Self.renew(refused: attributes["password"], account: account, in: context)
        default:
            return  // store, and anything newer: the token is kept by sfauth already
        }
    }

    /// The answer to `get`; when there is none, `quit=1` (so git stops instead of asking for a
    /// password) and the failure.
    private static func answer(account: String?, in context: CommandContext) async throws(CommandFailure) -> String {
        do {
            let token = try await context.accessToken(account: account)
            return GitCredential.answer(username: token.username ?? GitCredential.defaultUsername, password: token.accessToken, expiry: token.expiry)
        } catch {
            print(GitCredential.quit, terminator: "")
            throw CommandFailure(error, context: "git needs a token")
        }
    }

    /// After git's `erase`: renews the token when `refused` is the one stored now (a server refused it
    /// before its time). When only a new sign-in helps, says so (git itself only says the
    /// authentication failed); quiet otherwise — the next `get` says what to do.
    private static func renew(refused: String?, account: String?, in context: CommandContext) async {
        guard let refused, context.settings.suppliedToken == nil else { return }
        do throws(OAuthError) {
            let accounts = try context.accounts()
            guard let current = try accounts.store.credentials(of: try accounts.store.identifier(selectedBy: account)),
                  current.accessToken == refused else { return }
            _ = try await accounts.token(for: current.identifier, forceRefresh: true)
        } catch where error.recovery == .logInAgain {
            StandardError.line("sfauth: the git server refused the token: \(SFAuthCommand.sentence(SFAuthWords.message(for: error)))")
        } catch {
            return
        }
    }
}
