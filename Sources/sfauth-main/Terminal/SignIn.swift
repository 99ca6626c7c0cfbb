import Glibc
import SFAuth
import SFAuthCLI

/// Carries out a `SignInPlan` at this terminal: finds the server's endpoints, asks for a password or
/// loads a key, opens the browser, tells the person what is happening on standard error, and lets
/// Ctrl-C cancel. The one place `sfauth login` talks to the world.
struct SignIn {
    let plan: SignInPlan
    /// Where the credentials are kept.
    let store: FileCredentialStore
    /// Why no keyring could be used, shown once per store when a refresh token went to a file.
    let keyringNotice: String?
    /// Also say where the credentials were saved (`--verbose`).
    let verbose: Bool
    let httpClient: CurlHTTPClient
    let context: CommandContext

    /// Signs in and stores the credentials; says so when the alias moved from another account.
    func perform() async throws(OAuthError) -> OAuthCredentials {
        for notice in plan.notices { StandardError.line(notice) }
        var client = plan.client
        let server = try await discoveredServer(client: &client)
        let grant = try await materializedGrant(server: server)
        let reporter = LoginProgressReporter(
            store: store, timeoutSeconds: plan.timeoutSeconds, acceptsPaste: plan.acceptsPaste,
            session: context.session, keyringNotice: keyringNotice, verbose: verbose)
        let coordinator = OAuthCoordinator(
            configuration: .init(
                server: server, client: client, timeout: .seconds(plan.timeoutSeconds), browserLauncher: browserLauncher(),
                alias: plan.alias, account: plan.account, pastedRedirects: plan.acceptsPaste ? StandardInputRedirectSource() : nil),
            delegate: reporter, httpClient: httpClient, store: store)
        let interrupts = InterruptHandler { coordinator.cancel() }
        defer { interrupts.stop() }
        let aliasHolder = currentHolder(of: plan.alias)
        let credentials = if let grant { try await coordinator.authenticate(using: grant) } else { try await coordinator.authenticate() }
        if let alias = plan.alias, let aliasHolder, aliasHolder.identifier != credentials.identifier {
            StandardError.line(
                "The alias \(alias) now names \(credentials.username ?? credentials.identifier); it no longer names \(aliasHolder.username ?? aliasHolder.identifier) (\(aliasHolder.identifier))."
            )
        }
        return credentials
    }

    /// The server: known endpoints as they are, or an issuer's discovered ones with explicit
    /// overrides — and, when the plan says so, the scopes its metadata suggest for `client`.
    private func discoveredServer(client: inout ClientConfiguration) async throws(OAuthError) -> AuthorizationServer {
        switch plan.server {
        case .known(let server):
            return server
        case .discover(let issuer, let overrides):
            // A hung server would otherwise make this a silent wait of up to SFAUTH_HTTP_TIMEOUT.
            StandardError.line("Reading the endpoints of \(issuer) from its metadata…")
            let document = try await DiscoveryClient(
                httpClient: httpClient, cacheDirectory: DiscoveryClient.cacheDirectory(environment: context.environment)
            )
            .discover(issuer: issuer)
            if plan.scopesFromDiscovery { client.scopes = document.defaultScopes }
            return overrides.applied(to: document.server)
        case .protectedResource(let target):
            return try await resourceServer(target, client: &client)
        }
    }

    /// The authorization server of a protected resource, and the client to sign in there with
    /// (`ResourceSignIn`): what it registered or reused is said on standard error.
    private func resourceServer(_ target: ResourceTarget, client: inout ClientConfiguration) async throws(OAuthError) -> AuthorizationServer {
        StandardError.line("Finding the authorization server of \(target.resource)…")
        let registrations = ClientRegistrations(store: store)
        var options = ResourceSignIn.Options(
            issuer: target.issuer, clientId: client.clientId.isEmpty ? nil : client.clientId, clientSecret: client.clientSecret,
            clientMetadataURL: target.clientMetadataURL, scopes: client.scopes, redirect: client.redirect,
            additionalAuthorizationParameters: client.additionalAuthorizationParameters)
        // Signing a stored account in again: its own client, unless that is the one registered here.
        if let stored = target.storedClientId, let issuer = target.issuer, registrations.registration(at: issuer)?.clientId != stored {
            options.clientId = stored
            if options.redirect.port == 0 { options.redirect.port = target.storedCallbackPort ?? 0 }
        }
        let prepared = try await ResourceSignIn(
            httpClient: httpClient,
            discoveryClient: DiscoveryClient(
                httpClient: httpClient, cacheDirectory: DiscoveryClient.cacheDirectory(environment: context.environment)),
            registrations: registrations
        ).prepare(resource: target.resource, options: options)
        for notice in prepared.notices { StandardError.line(notice) }
        client = prepared.client
        return prepared.server
    }

    /// The library's grant for the plan's: the password asked now, the key read now; `nil` for the browser.
    private func materializedGrant(server: AuthorizationServer) async throws(OAuthError) -> Grant? {
        switch plan.grant {
        case .browser: return nil
        case .deviceCode: return .deviceCode
        case .clientCredentials: return .clientCredentials
        case .refreshToken(let token): return .refreshToken(token)
        case .password(let username):
            let host = EndpointURL.parts(of: server.tokenEndpoint)?.host ?? "the server"
            return .password(username: username, password: try SecretInput.password(prompt: "Password for \(username) at \(host): "))
        case .jwtBearer(let keyFile, let keyID, let username, let audience):
            let signer = try await JWTAssertionSigner(privateKeyFile: keyFile, keyID: keyID)
            return .jwtBearer(username: username, signer: signer, audience: audience)
        }
    }

    /// The launcher for the plan's browser; it never sees sfauth's secrets.
    private func browserLauncher() -> (any BrowserLauncher)? {
        switch plan.browser {
        case .printURL: return nil
        case .system: return SystemBrowserLauncher(environment: context.childEnvironment)
        case .command(let arguments): return SystemBrowserLauncher(command: arguments, environment: context.childEnvironment)
        }
    }

    /// The account that has `alias` now, so that the sign-in can say when it takes it from another.
    private func currentHolder(of alias: String?) -> OAuthCredentials? {
        guard let alias else { return nil }
        return (try? store.identifiers())?.lazy.compactMap { try? store.load(identifier: $0) }.first { $0.alias == alias }
    }
}
