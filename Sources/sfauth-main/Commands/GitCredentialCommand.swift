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

            Without --account (sfauth setup-git always writes one), it answers only a host that is the \
            default account's own server (GitHub, GitLab or Gitea signing you in to their git): any \
            sign-in may change the default, and its token must not go to another host. For any other \
            host it says which account to name, answers quit=1 and exits 2.

            It never opens a browser. When a sign-in is needed it prints one line on standard error with \
            the command to run, answers quit=1 (so git stops instead of asking for a password) and exits 3.

            Examples:
              sfauth setup-git --host git.example --account work
              printf 'protocol=https\\nhost=git.example\\n\\n' | sfauth git-credential --host git.example get
            """
    )

    @Option(
        help: ArgumentHelp(
            "The account: an alias, username, email or identifier. Default: the default account, for its own server only.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("A host to answer for: https://host[:port], http://host:port or host[:port] (https); repeatable.", valueName: "host"))
    var host: [String] = []

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp(
            "Renew the token first unless it stays valid this long (90s, 10m, 1h), for a long fetch or push.", valueName: "duration"))
    var minValid: String?

    @Argument(help: ArgumentHelp("What git asks: get, store or erase.", valueName: "operation"))
    var operation: String

    func validate() throws {
        try TargetOptions.requireDuration(minValid)
        if host.isEmpty { throw ValidationError("Give the hosts to answer for with --host (sfauth setup-git writes them).") }
    }

    func run(in context: CommandContext) async throws {
        let hosts = try host.map { h throws(OAuthError) in try GitCredential.Host(parsing: h) }
        let attributes = GitCredential.Attributes.readingStandardInput()
        // Another host, or an operation of a newer git: nothing to say.
        guard let requested = hosts.first(where: { $0.matches(attributes) }) else { return }
        switch operation {
        case "get":
            if account == nil, let foreign = Self.defaultAccount(foreignTo: requested, in: context) {
                print(GitCredential.quit, terminator: "")
                throw CommandFailure(
                    usage: "git asked for a token for \(requested.url), but the default account (\(TerminalText.escaped(foreign.displayLabel))) "
                        + "is not that server's, and any sign-in may change the default: name the account for this host with "
                        + "`sfauth setup-git --host \(requested.url) --account NAME`")
            }
            let wanted = WantedToken(target: TokenTarget(), minimumValidity: minValid.flatMap(WantedToken.duration))
            print(try await Self.answer(account: account, wanted: wanted, in: context), terminator: "")
        case "erase":
            guard account != nil || Self.defaultAccount(foreignTo: requested, in: context) == nil else { return }
            await Self.renew(refused: attributes["password"], account: account, in: context)
        default:
            return  // store, and anything newer: the token is kept by sfauth already
        }
    }

    /// The default account, when git's host is not its server (`Host.isServer(of:)`): a helper not
    /// told which account to use gives the default account's token only to its own server. `nil`
    /// when there is no stored default to speak of, or a token is supplied in the environment.
    private static func defaultAccount(foreignTo host: GitCredential.Host, in context: CommandContext) -> OAuthCredentials? {
        guard context.settings.suppliedToken == nil, let accounts = try? context.accounts(),
            let current = try? accounts.store.loadDefault(), !host.isServer(of: current)
        else { return nil }
        return current
    }

    /// The answer to `get`; when there is none, `quit=1` (so git stops instead of asking for a
    /// password) and the failure.
    private static func answer(account: String?, wanted: WantedToken, in context: CommandContext) async throws(CommandFailure) -> String {
        do {
            let token = try await context.accessToken(account: account, resource: nil, wanted: wanted)
            if let notice = context.minimumValidityNotice(for: token, wanted: wanted) { StandardError.line(notice) }
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
                current.accessToken == refused
            else { return }
            _ = try await accounts.token(for: current.identifier, forceRefresh: true)
        } catch  where error.recovery == .logInAgain {
            StandardError.line("sfauth: the git server refused the token: \(SFAuthCommand.sentence(SFAuthWords.message(for: error)))")
        } catch {
            return
        }
    }
}
