import ArgumentParser
import Glibc
import SFAuth
import SFAuthCLI

/// `sfauth proxy`: a loopback reverse proxy that adds a fresh token to every request.
struct ProxyCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Forward requests from a local address to UPSTREAM, each with a fresh access token.",
        discussion: """
            For tools that take a base URL and read a token once but run for hours: point them at the \
            proxy and it sends each request to UPSTREAM with Authorization: Bearer and a usable token \
            (replacing any Authorization the tool sent), renewed as sfauth token renews it. When UPSTREAM \
            answers 401, the token is renewed and the request sent once more, if its body was at most \
            --max-replay-body (larger bodies are streamed and not sent again; the 401 goes to the tool). \
            Responses stream through as they arrive (server-sent events, chunked).

            It listens on 127.0.0.1 (a free port unless --listen names one), [::1] or localhost only, or \
            on a Unix socket created mode 0600. It serves only your own user, forwards only paths under \
            UPSTREAM (a base path such as /v1 is kept; '..' is refused), never CONNECT or another origin, \
            and refuses requests a web page could make your browser send (another Host, a cross-site \
            Origin or Sec-Fetch-Site: 403).

            Answers of its own: 400/405 for a request it will not forward; 403 as above; 502 when UPSTREAM \
            cannot be reached (or the authorization server, to renew the token); 503 when there is no \
            token (the text names the sfauth login command to run). Each also gives a line on standard \
            error; --verbose adds one line per request (method, path without query, status, time). \
            Tokens are never logged. Ctrl-C or SIGTERM stops it (exit 0).

            Examples:
              sfauth proxy --print-url https://api.example/v1 > proxy.url & proxy=$!
              until [ -s proxy.url ]; do sleep 0.05; done    # written once it listens
              OPENAI_BASE_URL="$(cat proxy.url)" some-tool; kill "$proxy"
              sfauth proxy --listen 127.0.0.1:8080 --account work https://api.example/v1
              sfauth proxy --socket "$XDG_RUNTIME_DIR/api.sock" https://api.example
              sfauth proxy --audience orders-api --min-valid 2m https://orders.example/api

            A token bound to a protected resource (an account signed in with --resource, or a per-call \
            --resource) goes only within that resource: UPSTREAM must be inside it.
            """
    )

    @Option(help: ArgumentHelp("The account: alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "Use the account bound to this protected resource (sfauth login --resource); with --account A not bound to it, a token for it from A's sign-in.",
            valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens")
    var targetOptions: TargetOptions

    @Option(help: ArgumentHelp("Listen on HOST[:PORT]: 127.0.0.1, [::1] or localhost only. Default: 127.0.0.1, a free port.", valueName: "address"))
    var listen: String?

    @Option(help: ArgumentHelp("Listen on a Unix socket at this path (mode 0600), removed on exit.", valueName: "path"))
    var socket: String?

    @Flag(help: "Print the proxy's base URL (http://127.0.0.1:PORT or unix:PATH) on standard output once listening.")
    var printURL = false

    @Option(
        help: ArgumentHelp(
            "Keep request bodies up to this size to send them again after a 401 (e.g. 512KiB, 4MiB). Default: 1MiB.", valueName: "size"))
    var maxReplayBody: String?

    @Flag(name: [.customShort("v"), .long], help: "Log one line per request on standard error.")
    var verbose = false

    @Argument(help: ArgumentHelp("Where requests go: https://host[/base-path] (http only to a loopback host).", valueName: "upstream"))
    var upstream: String

    func validate() throws {
        if listen != nil && socket != nil { throw ValidationError("Give --listen or --socket, not both.") }
    }

    func run(in context: CommandContext) async throws {
        let address: ProxyListenAddress =
            if let socket { .unix(path: socket) } else if let listen { try ProxyListenAddress.parse(listen) } else { .defaultTCP }
        var configuration = ProxyServer.Configuration(upstream: try ProxyUpstream(parsing: upstream), listen: address)
        if let maxReplayBody { configuration.maxReplayBody = try ByteSize.parse(maxReplayBody, option: "--max-replay-body") }
        configuration.verbose = verbose

        try requireUpstreamWithinBoundResource(configuration.upstream, in: context)

        // The one place the proxy's tokens come from: the same call `sfauth token` makes, with the
        // per-call target and --min-valid.
        let (account, resource, wanted) = (self.account, self.resource, targetOptions.wanted())
        let tokens: ProxyTokenProvider = { renew throws(OAuthError) in
            var asked = wanted
            asked.forceRefresh = renew
            let issued = try await context.accessToken(account: account, resource: resource, wanted: asked)
            return ProxyToken(value: issued.accessToken, expiry: issued.expiry)
        }
        // A wrong --account or --resource ends it now; a sign-in still to come does not: requests get
        // 503 naming the command until then.
        do {
            _ = try await tokens(false)
        } catch {
            if case .configuration = error { throw error }
            StandardError.line("sfauth proxy: no token yet: \(SFAuthWords.message(for: error)) Until then requests get 503.")
        }

        let server = ProxyServer(configuration: configuration, tokens: tokens, describe: { SFAuthWords.message(for: $0) })
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        let interrupts = InterruptHandler { stop.yield() }
        let url = try server.start()
        if printURL {
            print(url)
            fflush(nil)
        }
        StandardError.line("sfauth proxy: \(url) → \(configuration.upstream.origin)\(configuration.upstream.basePath) (Ctrl-C to stop)")
        for await _ in stopped { break }
        server.stop()
        interrupts.stop()
    }

    /// Refuses an UPSTREAM outside the resource the token is bound to: the account's (signed in with
    /// `--resource`), or the per-call `--resource` given with an account not bound to it.
    private func requireUpstreamWithinBoundResource(_ upstream: ProxyUpstream, in context: CommandContext) throws(OAuthError) {
        guard context.settings.suppliedToken == nil else { return }
        let store = try context.accountStore()
        let bound: String?
        if let resource, try context.isPerCall(resource, account: account, store: store) {
            bound = TokenTarget.isWebResource(resource) ? resource : nil
        } else {
            do throws(OAuthError) {
                bound = try store.credentials(of: try store.identifier(selectedBy: account, resource: resource))?.resource
            } catch .loginRequired {
                bound = resource  // not signed in yet: the token it will get is the resource's
            }
        }
        guard let bound else { return }
        try APITarget.requireWithin(bound, upstream.origin + upstream.basePath, allowedHosts: [])
    }
}
