import ArgumentParser
import Dispatch
import SFAuth
import SFAuthCLI
import FoundationEssentials
import Glibc

/// `sfauth login`: signs in through the browser and stores the credentials.
struct LoginCommand: AsyncParsableCommand {
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

    var browserCommand: String? { session.browserCommand }
    var noBrowser: Bool { session.noBrowser }
    var paste: Bool { session.paste }
    var timeout: Int? { session.timeout }
    var alias: String? { session.alias }
    var storage: StorageMode? { session.storage }
    var account: String? { session.account }
    var verbose: Bool { session.verbose }
    var force: Bool { session.force }

    /// Checks the flags of `login` itself; the server and client settings are checked when they are
    /// resolved with the environment and the configuration file, with errors that name their sources.
    func validate() throws {
        let chosen = grants.chosenGrants(jwtKeyFileGiven: provider.jwtKeyFile != nil)
        if chosen.count > 1 {
            throw ValidationError("Choose one way to sign in: \(chosen.joined(separator: ", ")) exclude each other.")
        }
        if let timeout, timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds.") }
        if noBrowser && browserCommand != nil { throw ValidationError("--no-browser and --browser-command exclude each other.") }
        if account != nil || force, let other = chosen.first(where: { $0 != "--device" }) {
            throw ValidationError("\(account != nil ? "--account" : "--force") signs in the way the account was signed in; leave out \(other) (--device may replace a browser sign-in).")
        }
        if let alias, alias.isEmpty || alias.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw ValidationError("--alias must be a non-empty name without spaces or '/'.")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let store: FileCredentialStore
        let launcher: (any BrowserLauncher)?
        let httpClient: CurlHTTPClient
        let keyringNotice: String?
        let server: AuthorizationServer
        var client: ClientConfiguration
        let grant: Grant?
        do throws(OAuthError) {
            httpClient = try HTTPSettings.client(environment: environment)
            let settings = SFAuthEnvironment.settings(environment)
            let mode = if let storage { storage } else { try settings.storageMode() }
            let setup = try mode.store(directory: try StoreSetup.directory(settings), signingIn: true)
            store = setup.store
            keyringNotice = setup.notice.map { $0 + " `sfauth accounts` shows where each one lives." }
            try store.requireWritable()
            let secret = try SecretInput.clientSecret(file: grants.clientSecretFile, environment: environment)
            // A profile may name the browser (an argument list); the configuration is read once for it
            // where the sign-in itself does not need it (an SFDX URL, a stored account's recipe).
            var profileBrowser: [String]? {
                (try? provider.load(environment: environment, reportingMissing: true))?.resolved.browser?.value
            }
            let browser: [String]?
            if let sfdx = try grants.sfdxAuthURL() {
                // The URL names the org, the client and the refresh token: nothing else is needed.
                server = Salesforce.server(loginHost: sfdx.instanceURL)
                client = ClientConfiguration(clientId: sfdx.clientId, clientSecret: sfdx.clientSecret ?? secret)
                grant = .refreshToken(sfdx.refreshToken)
                browser = profileBrowser
            } else if let stored = try storedAccount(in: store) {
                // Signing in again: the account's own server and recipe, never the defaults.
                let again = StoredAccountSignIn(credentials: stored)
                try again.requireSameServer(flags: provider.layer) { () throws(OAuthError) in
                    try provider.load(environment: environment).resolved.server
                }
                server = again.server
                client = again.client(secret: secret, scopes: provider.scopes.flatMap(SettingValue.splitWords))
                grant = grants.device ? .deviceCode : try await again.grant { username throws(OAuthError) in
                    let host = EndpointURL.parts(of: again.server.tokenEndpoint)?.host ?? "the server"
                    return try SecretInput.password(prompt: "Password for \(username) at \(host): ")
                }
                browser = profileBrowser
            } else {
                let configuration = try provider.load(environment: environment)
                server = try await self.server(for: configuration.resolved.server, environment: environment, httpClient: httpClient)
                client = configuration.resolved.client
                client.clientSecret = secret
                grant = try await grants.grant(for: configuration.resolved, server: server)
                browser = configuration.resolved.browser?.value
            }
            // --browser-command wins over the profile's browser.
            launcher = try makeBrowserLauncher(environment: environment, profileBrowser: browser)
        } catch {
            throw CommandFailure(error)
        }
        if force && !client.additionalAuthorizationParameters.contains(where: { $0.name == "prompt" }) {
            client.additionalAuthorizationParameters.append(AuthorizationParameter(name: "prompt", value: "login"))
        }
        let acceptsPaste = paste || (isatty(0) == 1 && (noBrowser || !LoginProgressReporter.hasDisplay(environment)))
        // The device grant waits as long as its code is valid (the coordinator stops at the code's
        // expires_in); the browser sign-in five minutes.
        let timeout = session.timeout ?? (grant?.authType == .deviceCode ? DeviceAuthorization.maximumLifetime : 300)
        let reporter = LoginProgressReporter(store: store, timeoutSeconds: timeout, acceptsPaste: acceptsPaste, environment: environment,
                                             keyringNotice: keyringNotice, verbose: verbose)
        let coordinator = OAuthCoordinator(
            configuration: .init(server: server, client: client, timeout: .seconds(timeout), browserLauncher: launcher, alias: alias,
                                 pastedRedirects: acceptsPaste ? StandardInputRedirectSource() : nil),
            delegate: reporter, httpClient: httpClient, store: store)
        let interrupts = InterruptHandler { coordinator.cancel() }
        defer { interrupts.stop() }
        // Who has the alias now: when the sign-in takes it from another person's account, say so.
        let aliasHolder = alias.flatMap { alias in
            (try? store.identifiers())?.lazy.compactMap { try? store.load(identifier: $0) }.first { $0.alias == alias }
        }

        let credentials: OAuthCredentials
        do {
            if let grant {
                credentials = try await coordinator.authenticate(using: grant)
            } else {
                credentials = try await coordinator.authenticate()
            }
        } catch {
            throw CommandFailure(error)
        }
        if let alias, let aliasHolder, aliasHolder.identifier != credentials.identifier {
            StandardError.line("The alias \(alias) now names \(credentials.username ?? credentials.identifier); it no longer names \(aliasHolder.username ?? aliasHolder.identifier) (\(aliasHolder.identifier)).")
        }
    }

    // MARK: - Building the configuration

    /// The server: known endpoints as they are, or an issuer's discovered ones with explicit overrides.
    private func server(for selection: ServerSelection, environment: [String: String],
                        httpClient: any HTTPClient) async throws(OAuthError) -> AuthorizationServer {
        switch selection {
        case .known(let server):
            return server
        case .discover(let issuer, let overrides):
            let client = DiscoveryClient(httpClient: httpClient, cacheDirectory: DiscoveryClient.cacheDirectory(environment: environment))
            return overrides.applied(to: try await client.discover(issuer: issuer).server)
        }
    }

    /// The stored account to sign in to again: `--account`'s, else with `--force` the default one
    /// (`nil` when none is stored: a plain sign-in then).
    private func storedAccount(in store: FileCredentialStore) throws(OAuthError) -> OAuthCredentials? {
        if let account { return try store.load(identifier: try AccountResolver(store: store).identifier(for: account)) }
        guard force else { return nil }
        return try store.loadDefault()
    }

    private func makeBrowserLauncher(environment: [String: String], profileBrowser: [String]?) throws(OAuthError) -> (any BrowserLauncher)? {
        if noBrowser { return nil }
        // The browser never sees sfauth's secrets; `isRemoteWithoutDisplay` below reads the same variables.
        let environment = SFAuthEnvironment.forChild(environment)
        if browserCommand == nil, let profileBrowser { return SystemBrowserLauncher(command: profileBrowser, environment: environment) }
        guard let browserCommand else {
            let system = SystemBrowserLauncher(environment: environment)
            // Over SSH without a forwarded display a browser would open on a screen nobody sees (or a
            // text browser would take over this terminal): print the URL, the ssh -L line, take a paste.
            if LoginProgressReporter.isRemoteWithoutDisplay(environment) && !system.isWSL && (environment["BROWSER"] ?? "").isEmpty {
                return nil
            }
            return system
        }
        do {
            let argv = try splitCommandLine(browserCommand)
            guard !argv.isEmpty else { throw OAuthError.configuration("--browser-command is empty") }
            return SystemBrowserLauncher(command: argv, environment: environment)
        } catch let error as OAuthError {
            throw error
        } catch {
            throw .configuration("--browser-command: \(error)")
        }
    }
}

extension StorageMode: ExpressibleByArgument {}
