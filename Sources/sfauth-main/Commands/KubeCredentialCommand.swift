import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth kube-credential`: a client-go exec credential plugin — prints an `ExecCredential` with
/// the account's access token for kubectl (and anything else built on client-go).
struct KubeCredentialCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "kube-credential",
        abstract: "kubectl exec credential plugin: print an ExecCredential with the account's token.",
        discussion: """
            kubectl runs this command (see sfauth kubeconfig for the stanza) and reads one ExecCredential \
            from standard output, in the apiVersion KUBERNETES_EXEC_INFO asks for (client.authentication.k8s.io/v1, \
            or v1beta1; v1 when the variable is absent), with status.token and status.expirationTimestamp. \
            The token comes as for sfauth token: reused while valid, refreshed when needed (one refresh \
            across processes), SFAUTH_ACCESS_TOKEN when set.

            When only a new sign-in helps and kubectl says the session is interactive (and a terminal is \
            there), it signs the account in again (sfauth login --account NAME) — one sign-in at a time: \
            parallel calls wait for it and use its token. Otherwise it exits with 3 and one line on \
            standard error saying what to run. Standard output carries nothing but the ExecCredential.

            Examples:
              sfauth kubeconfig --account work       # the users[].user.exec stanza to paste
              KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}' \\
                sfauth kube-credential --account work
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "The token of the account bound to this protected resource; with --account A not bound to it, a token for it from A's sign-in.",
            valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens")
    var targetOptions: TargetOptions

    func run(in context: CommandContext) async throws {
        let request = try ExecCredential.Request(environment: context.environment)
        let wanted = targetOptions.wanted()
        let token = try await token(wanted, interactive: request.interactive ?? true, in: context)
        print(ExecCredential.render(apiVersion: request.apiVersion, token: token.accessToken, expiry: token.expiry))
        if let notice = context.minimumValidityNotice(for: token, wanted: wanted) { StandardError.line(notice) }
    }

    /// The token `wanted`; when only a new sign-in helps and a person is there (kubectl's
    /// `interactive`, and a terminal), after signing the account in again — one sign-in at a time.
    private func token(_ wanted: WantedToken, interactive: Bool, in context: CommandContext) async throws(OAuthError) -> IssuedToken {
        do {
            return try await context.accessToken(account: account, resource: resource, wanted: wanted)
        } catch .loginRequired(let problem) {
            let accounts = try context.accounts()
            let identifier = try accounts.store.identifier(selectedBy: account, resource: resource)
            guard interactive, InteractiveSignIn.terminalAvailable(), let stored = try accounts.store.credentials(of: identifier) else {
                throw .loginRequired(problem)
            }
            let signIn = InteractiveSignIn(store: accounts.store, executablePath: context.executablePath)
            return try await signIn.withSignIn(of: stored) { () async throws(OAuthError) in
                try await context.accessToken(account: stored.identifier, resource: resource, wanted: wanted)
            }
        }
    }
}
