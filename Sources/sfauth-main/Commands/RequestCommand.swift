import ArgumentParser
import FoundationEssentials
import SFAuth
import SFAuthCLI

/// `sfauth request`: an authenticated HTTP request with an account's token, like `gh api`.
struct RequestCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send an HTTP request with an account's token; the response body goes to standard output.",
        discussion: """
            A path is resolved against the account's instance URL (Salesforce); a whole URL is used as it \
            is. The token goes only to the account's own hosts (its instance and its authorization server) \
            unless --allow-host names another. When the server answers 401 — Salesforce does when the \
            org's session timeout ended a token early (INVALID_SESSION_ID) — the token is renewed once and \
            the request sent again.

            An account signed in to a protected resource (sfauth login --resource) is used for URLs within \
            that resource, and its token goes nowhere else. When a resource answers 401 naming its metadata \
            (RFC 9728) and no account is bound to it, the sfauth login --resource command is said (on a \
            terminal, offered). When it answers 403 insufficient_scope, a terminal signs in again for the \
            scopes held and those asked for, and the request is sent once more; without a terminal, the \
            command to run is said (exit 3).

            Exit status: 0 for a 1xx–3xx answer, 7 for 4xx, 8 for 5xx, 6 when no answer came; 2 and 3 as \
            everywhere (a bad command line; a sign-in needed).

            Examples:
              sfauth request /services/data/
              sfauth request -X POST -H 'Content-Type: application/json' \\
                     -d '{"Name":"Acme"}' /services/data/v62.0/sobjects/Account
              sfauth request --include --account work https://api.example/v1/me
              sfauth request -X POST -H 'Content-Type: application/json' -d @call.json https://mcp.example/mcp
            """
    )

    @Option(help: ArgumentHelp("The account: alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Option(
        help: ArgumentHelp(
            "Use the account bound to this protected resource (sfauth login --resource); with --account A not bound to it, a token for it from A's sign-in, sent only within it.",
            valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens")
    var targetOptions: TargetOptions

    @Option(name: [.customShort("X"), .customLong("method")], help: "The request method. Default: GET, or POST with a body.")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A header 'Name: value'; repeatable.", valueName: "header"))
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: ArgumentHelp("The request body.", valueName: "data"))
    var data: String?

    @Option(help: ArgumentHelp("Read the request body from a file ('-' for standard input).", valueName: "path"))
    var dataFile: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and the response headers before the body.")
    var include = false

    @Option(help: ArgumentHelp("Also send the token to this host (host or host:port); repeatable.", valueName: "host"))
    var allowHost: [String] = []

    @Argument(help: ArgumentHelp("A path on the account's instance (/services/data/), or a whole URL.", valueName: "path-or-url"))
    var target: String

    func validate() throws {
        if data != nil && dataFile != nil { throw ValidationError("Give --data or --data-file, not both.") }
        if let bad = headers.first(where: { !$0.contains(":") }) { throw ValidationError("--header takes 'Name: value', not '\(bad)'.") }
        // The token goes only to hosts the allow-list names; a Host header would send it to another
        // virtual host on the same address than the one checked.
        if headerFields.contains(where: { $0.name.lowercased() == "host" }) {
            throw ValidationError("--header cannot set Host: the token goes only to the host of the URL; give that URL instead.")
        }
    }

    func run(in context: CommandContext) async throws {
        let response = try await ResourceChallengeHandling(command: self, context: context).send()
        if include {
            // The server's words: escaped like every outside text that reaches a terminal.
            var head = "HTTP \(response.status)\n"
            for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { head += "\(name.terminalSafe): \(value.terminalSafe)\n" }
            StandardOutput.write(Array((head + "\n").utf8))
        }
        StandardOutput.write(response.body)
        switch response.status {
        case 400..<500: throw CommandFailure(silently: .httpClientError)
        case 500...: throw CommandFailure(silently: .httpServerError)
        default: return
        }
    }

    /// Sends the request with `SFAUTH_ACCESS_TOKEN` when it is set (once, to its `SFAUTH_INSTANCE_URL`'s
    /// host and the allowed ones), else with the token of the account `identifier` (renewed once
    /// after a `401`).
    func send(as identifier: String?, in context: CommandContext, body: [UInt8]) async throws(OAuthError) -> (
        response: HTTPResponse, credentials: OAuthCredentials?
    ) {
        if let supplied = context.settings.suppliedToken {
            let httpClient = try context.httpClient()
            let allowed = [supplied.instanceURL].compactMap { $0.flatMap(APITarget.hostName(of:)) } + allowHost
            let request = try request(base: supplied.instanceURL, allowedHosts: allowed, body: body)
            return (try await httpClient.sendForOAuth(AuthorizedRequester.authorized(request, bearer: supplied.accessToken)), nil)
        }
        let accounts = try context.accounts()
        let perCall = try perCallResource(in: accounts.store, context: context)
        if perCall != nil || !targetOptions.wanted().isPlain {
            return try await sendWithTarget(as: identifier, resource: perCall, accounts: accounts, in: context, body: body)
        }
        let requester = AuthorizedRequester(tokenSource: accounts.source, httpClient: try context.httpClient())
        let sent = try await requester.send(account: identifier) { credentials throws(OAuthError) in
            // The URL is known once the account is: a path goes to its instance, and only to its own
            // hosts — a resource account's token only within its resource.
            if let resource = credentials.resource {
                try APITarget.requireWithin(resource, try APITarget.url(for: target, base: nil), allowedHosts: allowHost)
                return try request(base: nil, allowedHosts: nil, body: body)
            }
            return try request(base: credentials.instanceURL, allowedHosts: APITarget.ownHosts(of: credentials) + allowHost, body: body)
        }
        return (sent.response, sent.credentials)
    }

    /// The `--resource` that is a per-call target of `--account` (an account not bound to it); `nil`
    /// when `--resource` picks the account bound to it, or is not given.
    func perCallResource(in store: FileCredentialStore, context: CommandContext) throws(OAuthError) -> String? {
        guard let resource, try context.isPerCall(resource, account: account, store: store) else { return nil }
        return resource
    }

    /// Sends the request with a per-call token (`--scope`, `--audience`, `--resource` of an account
    /// not bound to it), renewed once after a `401`. A token for a resource goes only within it;
    /// any other goes only to the account's own hosts, as its own token would.
    private func sendWithTarget(
        as identifier: String?, resource perCall: String?, accounts: StoredAccounts, in context: CommandContext, body: [UInt8]
    ) async throws(OAuthError) -> (response: HTTPResponse, credentials: OAuthCredentials?) {
        guard let credentials = try accounts.store.credentials(of: identifier) else {
            throw .loginRequired(Problem("Not signed in: no account is stored.", remedy: .signIn(account: nil, grant: nil)))
        }
        let request: HTTPRequest
        // (A resource named otherwise — Entra's api://… — says no host: the account's own, and --allow-host.)
        let webResource = perCall.flatMap { TokenTarget.isWebResource($0) ? $0 : nil }
        if let within = webResource ?? credentials.resource {
            try APITarget.requireWithin(within, try APITarget.url(for: target, base: nil), allowedHosts: allowHost)
            request = try self.request(base: nil, allowedHosts: nil, body: body)
        } else {
            request = try self.request(base: credentials.instanceURL, allowedHosts: APITarget.ownHosts(of: credentials) + allowHost, body: body)
        }
        let httpClient = try context.httpClient()
        var wanted = targetOptions.wanted()
        var token = try await context.accessToken(account: credentials.identifier, resource: resource, wanted: wanted)
        var response = try await httpClient.sendForOAuth(AuthorizedRequester.authorized(request, bearer: token.accessToken))
        if response.status == 401 {
            wanted.forceRefresh = true
            token = try await context.accessToken(account: credentials.identifier, resource: resource, wanted: wanted)
            response = try await httpClient.sendForOAuth(AuthorizedRequester.authorized(request, bearer: token.accessToken))
        }
        return (response, credentials)
    }

    /// The request for `target`: a path resolved against `base`, and only to `allowedHosts` (`nil`:
    /// checked already).
    private func request(base: String?, allowedHosts: [String]?, body: [UInt8]) throws(OAuthError) -> HTTPRequest {
        let url = try APITarget.url(for: target, base: base)
        if let allowedHosts { try APITarget.requireAllowed(url, allowedHosts: allowedHosts) }
        return HTTPRequest(method: method?.uppercased() ?? (body.isEmpty ? "GET" : "POST"), url: url, headers: headerFields, body: body)
    }

    /// The `--header` values as name and value.
    private var headerFields: [(name: String, value: String)] {
        headers.map { header in
            let parts = header.split(separator: ":", maxSplits: 1)
            return (String(parts[0]).trimmingSpaces, parts.count > 1 ? String(parts[1]).trimmingSpaces : "")
        }
    }

    func readBody() throws(OAuthError) -> [UInt8] {
        if let data { return Array(data.utf8) }
        guard let dataFile else { return [] }
        if dataFile == "-" { return StandardInput.readAll() }
        guard let contents = FileManager.default.contents(atPath: dataFile) else {
            throw .configuration("cannot read --data-file \(dataFile)")
        }
        return Array(contents)
    }
}
