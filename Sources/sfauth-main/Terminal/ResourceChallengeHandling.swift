import SFAuth
import SFAuthCLI

/// What `sfauth request` does with a protected resource's challenges (RFC 6750 §3, RFC 9728 §5.1):
/// picks the account bound to the URL; when no account is bound to it and it answers `401` naming
/// its metadata, says the `sfauth login --resource` command (on a terminal, offers to run it); when
/// it answers `403 insufficient_scope`, signs in again for the scopes held and those asked for (on a
/// terminal; otherwise it says the command) and sends the request once more.
struct ResourceChallengeHandling {
    let command: RequestCommand
    let context: CommandContext

    /// Sends the request, answering the resource's challenges.
    func send() async throws(OAuthError) -> HTTPResponse {
        let body = try command.readBody()
        if context.settings.suppliedToken != nil { return try await command.send(as: nil, in: context, body: body).response }
        let store = try context.accountStore()
        let url = EndpointURL.parts(of: command.target) != nil ? command.target : nil
        var identifier =
            try command.perCallResource(in: store, context: context) != nil
            ? try store.identifier(selectedBy: command.account) : try store.identifier(selectedBy: command.account, resource: command.resource)
        if identifier == nil, command.account == nil, let url {
            identifier = try AccountResolver(store: store).identifier(boundTo: url)
        }
        var sent: (response: HTTPResponse, credentials: OAuthCredentials?)
        do {
            sent = try await command.send(as: identifier, in: context, body: body)
        } catch {
            // No account's token may go to the URL (or no account is stored): ask the resource itself.
            guard identifier == nil, command.account == nil, let url, Self.mayBeAResource(error) else { throw error }
            return try await answerUnknownResource(at: url, body: body, otherwise: error)
        }
        if sent.response.status == 403, let credentials = sent.credentials, let resource = credentials.resource,
            let challenge = BearerChallenge.of(sent.response), challenge.wantsMoreScope
        {
            try await stepUp(credentials, resource: resource, challenge: challenge)
            sent = try await command.send(as: credentials.identifier, in: context, body: body)
        }
        return sent.response
    }

    /// Whether `error` is one a resource without an account could be behind: the token may not go
    /// there, or nothing is signed in.
    private static func mayBeAResource(_ error: OAuthError) -> Bool {
        switch error {
        case .configuration(let problem): if case .allowHost? = problem.remedy { return true } else { return false }
        case .loginRequired: return true
        default: return false
        }
    }

    /// Asks the URL what it is with a bare `GET` without a token (the request itself is not sent
    /// unauthenticated: it may change something). A `401` whose challenge names the resource's
    /// metadata means a sign-in to that resource: offered on a terminal (then the request is sent
    /// with the new account's token), said otherwise. Any other answer leaves `error` to be thrown.
    private func answerUnknownResource(at url: String, body: [UInt8], otherwise error: OAuthError) async throws(OAuthError) -> HTTPResponse {
        let response = try await context.httpClient().sendForOAuth(
            HTTPRequest(method: "GET", url: url, headers: [("Accept", "application/json, text/event-stream")]))
        guard response.status == 401, let metadata = BearerChallenge.of(response)?.resourceMetadata,
            ProtectedResource.isOwnMetadataLocation(metadata, for: url)
        else { throw error }
        let resource = Self.resource(describedAt: metadata) ?? url
        let problem = Problem(
            "\(TerminalText.escaped(url)) is a protected resource, and no account is signed in to it",
            remedy: .signInToResource(resource, scopes: nil))
        guard context.session.standardInputIsTerminal else { throw .loginRequired(problem) }
        StandardError.write("\(problem.text). Sign in to \(resource) now? [Y/n] ")
        let answer = (readLine(strippingNewline: true) ?? "n").lowercased()
        guard answer.isEmpty || answer == "y" || answer == "yes" else { throw .loginRequired(problem) }
        let credentials = try await signIn(to: resource, scopes: nil, account: nil)
        return try await command.send(as: credentials.identifier, in: context, body: body).response
    }

    /// Signs `credentials`' account in again for the scopes it holds and those `challenge` asks
    /// for (else those the resource lists), on a terminal; otherwise throws the command to run.
    private func stepUp(_ credentials: OAuthCredentials, resource: String, challenge: BearerChallenge) async throws(OAuthError) {
        var wanted = challenge.scopes
        if wanted.isEmpty {
            let discovery = ResourceDiscovery(
                httpClient: try context.httpClient(),
                discoveryClient: DiscoveryClient(
                    httpClient: try context.httpClient(), cacheDirectory: DiscoveryClient.cacheDirectory(environment: context.environment)))
            wanted = (try? await discovery.discover(resource: resource, issuer: credentials.server.issuer))?.metadata.scopesSupported ?? []
        }
        var scopes = credentials.scopes
        for scope in wanted where !scopes.contains(scope) { scopes.append(scope) }
        let missing = scopes.filter { !credentials.scopes.contains($0) }
        let problem = Problem(
            "\(resource) refused the token of \(credentials.displayLabel) for want of scope (insufficient_scope"
                + (missing.isEmpty ? ")" : "; it lacks \(missing.joined(separator: " ")))"),
            remedy: .signInToResource(resource, scopes: scopes))
        guard context.session.standardInputIsTerminal, !missing.isEmpty else { throw .loginRequired(problem) }
        StandardError.line("\(problem.text); signing in again for \(scopes.joined(separator: " ")).")
        _ = try await signIn(to: resource, scopes: scopes, account: credentials.identifier)
    }

    /// A browser sign-in to `resource`, as `sfauth login --resource RESOURCE [--scope …]` does it.
    private func signIn(to resource: String, scopes: [String]?, account: String?) async throws(OAuthError) -> OAuthCredentials {
        var request = SignInRequest()
        request.resource = resource
        request.account = account
        if let scopes { request.flags.set(.scopes, .words(scopes), from: .flag("--scope")) }
        let (store, notice) = try context.signInStore(storage: nil)
        try store.requireWritable()
        let plan = try SignInPlan(request, inputs: try SignInInputs.read(for: request, store: store, context: context))
        return try await SignIn(
            plan: plan, store: store, keyringNotice: notice, verbose: false, httpClient: try context.httpClient(), context: context
        )
        .perform()
    }

    /// The resource whose metadata is at `metadataURL`, when the URL is RFC 9728's well-known one
    /// (`/.well-known/oauth-protected-resource` before the resource's path).
    private static func resource(describedAt metadataURL: String) -> String? {
        let marker = "/.well-known/oauth-protected-resource"
        guard let range = metadataURL.firstRange(of: marker), !metadataURL.contains("?") else { return nil }
        return String(metadataURL[..<range.lowerBound]) + String(metadataURL[range.upperBound...])
    }
}
