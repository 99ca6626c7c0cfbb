import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth login`: signs in through the browser and stores the credentials.
struct LoginCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in through your browser (or without one) and store the credentials.",
        discussion: """
            Opens your browser at the server's login page, waits for the redirect on this machine's \
            loopback interface, exchanges the code for tokens (PKCE) and stores them. Progress goes to \
            standard error. Salesforce (login.salesforce.com) is the default; use --issuer, or \
            --authorize-url and --token-url, for any other OAuth 2.0 server, or name a profile of the \
            configuration file (see sfauth config). Flags override SFAUTH_* variables, which override \
            the profile, which overrides its preset.

            Examples:
              sfauth login
              sfauth login --profile work
              sfauth login --sandbox
              sfauth login --instance-url https://acme.my.salesforce.com \\
                           --client-id 3MVG9...
              sfauth login --issuer https://idp.example --client-id my-cli \\
                           --scope "openid offline_access"
              sfauth login --authorize-url https://idp.example/authorize \\
                           --token-url https://idp.example/token \\
                           --client-id my-cli --scope "openid offline_access"
              sfauth login --no-browser     # print the URL instead of opening a browser

            Without a browser here:
              sfauth login --issuer https://idp.example --client-id my-cli --device
              SFAUTH_CLIENT_SECRET=... sfauth login --issuer https://idp.example \\
                           --client-id svc --client-credentials
              sfauth login --client-id 3MVG9... --username ci@acme.com \\
                           --jwt-key-file server.key          # like sf org login jwt
              printf '%s\\n' "$PW" | sfauth login --issuer https://idp.example \\
                           --client-id my-cli --password --username alice
            """
    )

    @OptionGroup
    var provider: ProviderOptions

    @OptionGroup(title: "Without a browser (headless machines, service accounts, CI)")
    var grants: GrantOptions

    @OptionGroup(title: "Browser, account and storage")
    var session: SessionOptions

    /// Checks the flags of `login` itself; the server and client settings are checked when they are
    /// resolved with the environment and the configuration file, with errors that name their sources.
    func validate() throws {
        let chosen = grants.chosen(jwtKeyFileGiven: provider.grantSettings.jwtKeyFile != nil).map(\.rawValue)
        if chosen.count > 1 {
            throw ValidationError("Choose one way to sign in: \(chosen.joined(separator: ", ")) exclude each other.")
        }
        if let timeout = session.timeout, timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds.") }
        if session.noBrowser && session.browserCommand != nil { throw ValidationError("--no-browser and --browser-command exclude each other.") }
        if session.account != nil || session.force, let other = chosen.first(where: { $0 != "--device" }) {
            throw ValidationError(
                "\(session.account != nil ? "--account" : "--force") signs in the way the account was signed in; leave out \(other) (--device may replace a browser sign-in)."
            )
        }
        if let alias = session.alias, alias.isEmpty || alias.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw ValidationError("--alias must be a non-empty name without spaces or '/'.")
        }
    }

    func run(in context: CommandContext) async throws {
        let request = SignInRequest(provider, grants, session)
        let httpClient = try context.httpClient()
        let (store, notice) = try context.signInStore(storage: request.storage)
        try store.requireWritable()
        let plan = try SignInPlan(request, inputs: try SignInInputs.read(for: request, store: store, context: context))
        _ = try await SignIn(
            plan: plan, store: store, keyringNotice: notice.map { $0 + " `sfauth accounts` shows where each one lives." },
            verbose: request.verbose, httpClient: httpClient, context: context
        ).perform()
    }
}
