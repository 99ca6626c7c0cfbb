import ArgumentParser
import Dispatch
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `sfauth login`: signs in through the browser and stores the credentials.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in through your browser and store the credentials.",
        discussion: """
            Opens your browser at the server's login page, waits for the redirect on this machine's \
            loopback interface, exchanges the code for tokens (PKCE) and stores them. Progress goes to \
            standard error. Salesforce (login.salesforce.com) is the default; use --authorize-url and \
            --token-url for any other OAuth 2.0 server.

            Examples:
              sfauth login
              sfauth login --sandbox
              sfauth login --instance-url https://acme.my.salesforce.com --client-id 3MVG9...
              sfauth login --issuer https://idp.example --client-id my-cli --scope "openid offline_access"
              sfauth login --authorize-url https://idp.example/authorize --token-url https://idp.example/token \\
                           --client-id my-cli --scope "openid offline_access"
              sfauth login --no-browser          # print the URL instead of opening a browser
            """
    )

    @Flag(help: "Sign in to a Salesforce sandbox (test.salesforce.com).")
    var sandbox = false

    @Option(help: ArgumentHelp("Sign in through a Salesforce My Domain, e.g. https://acme.my.salesforce.com.", valueName: "url"))
    var instanceURL: String?

    @Option(help: ArgumentHelp("An OpenID Connect / OAuth 2.0 issuer: its endpoints are read from its published metadata.", valueName: "url"))
    var issuer: String?

    @Option(help: ArgumentHelp("Authorization endpoint of a non-Salesforce server (needs --token-url).", valueName: "url"))
    var authorizeURL: String?

    @Option(help: ArgumentHelp("Token endpoint of a non-Salesforce server (needs --authorize-url).", valueName: "url"))
    var tokenURL: String?

    @Option(help: ArgumentHelp("Revocation endpoint (RFC 7009) of a non-Salesforce server, used by logout.", valueName: "url"))
    var revokeURL: String?

    @Option(help: ArgumentHelp("OpenID Connect userinfo endpoint of a non-Salesforce server, to learn who signed in.", valueName: "url"))
    var userinfoURL: String?

    @Option(help: ArgumentHelp("The OAuth client id. Default for Salesforce: \(Salesforce.defaultClientId).", valueName: "id"))
    var clientId: String?

    @Option(name: .customLong("scope"), help: ArgumentHelp(
        "Scopes to request, space-separated; repeatable. Default for Salesforce: \(Salesforce.defaultScopes.joined(separator: " ")).",
        valueName: "scopes"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("Port for the redirect listener; 0 picks a free one. Default: 1717 for Salesforce, 0 otherwise.", valueName: "port"))
    var port: UInt16?

    @Option(help: ArgumentHelp("Path of the redirect URI. Default: /OauthRedirect for Salesforce, /callback otherwise.", valueName: "path"))
    var callbackPath: String?

    @Option(help: ArgumentHelp("Host of the redirect URI: 127.0.0.1, [::1] or localhost. Default: localhost for Salesforce, 127.0.0.1 otherwise.",
                               valueName: "host"))
    var callbackHost: String?

    @Option(help: ArgumentHelp("Command that opens the URL instead of xdg-open; the URL is appended or replaces %s.", valueName: "command"))
    var browserCommand: String?

    @Flag(help: "Do not open a browser; print the URL to open instead.")
    var noBrowser = false

    @Flag(help: ArgumentHelp("Also accept the address the browser ends up at, pasted on standard input (for a browser on another machine). On by default when standard input is a terminal and no browser can be shown here."))
    var paste = false

    @Option(help: ArgumentHelp("Seconds to wait for the browser's redirect.", valueName: "seconds"))
    var timeout: Int = 300

    @Option(help: ArgumentHelp("A short name for this account, for --account and sfauth use.", valueName: "name"))
    var alias: String?

    @Option(help: ArgumentHelp("Where the refresh token goes: auto (the keyring when one answers, else the 0600 file), keyring, or file. Default: $SFAUTH_STORAGE or auto.",
                               valueName: "mode"))
    var storage: StorageMode?

    @Option(help: ArgumentHelp("Pre-fill the username on the login page (login_hint).", valueName: "username"))
    var loginHint: String?

    @Option(name: .customLong("param"), help: ArgumentHelp(
        "An extra authorization request parameter, e.g. prompt=consent or a provider hint; repeatable.", valueName: "name=value"))
    var parameters: [String] = []

    @Flag(help: "Revoke the default account's tokens first and make the server ask for a fresh sign-in (prompt=login).")
    var force = false

    func validate() throws {
        if issuer != nil && (authorizeURL != nil || tokenURL != nil || sandbox || instanceURL != nil) {
            throw ValidationError("--issuer finds the endpoints itself; it cannot be combined with --authorize-url, --token-url, --sandbox or --instance-url.")
        }
        if issuer != nil && clientId == nil {
            throw ValidationError("--client-id is required with --issuer.")
        }
        if (authorizeURL == nil) != (tokenURL == nil) {
            throw ValidationError("--authorize-url and --token-url go together; give both.")
        }
        if authorizeURL != nil && (sandbox || instanceURL != nil) {
            throw ValidationError("--sandbox and --instance-url are for Salesforce; they cannot be combined with --authorize-url.")
        }
        if sandbox && instanceURL != nil {
            throw ValidationError("Give either --sandbox or --instance-url, not both.")
        }
        if authorizeURL == nil && issuer == nil && (revokeURL != nil || userinfoURL != nil) {
            throw ValidationError("--revoke-url and --userinfo-url are for servers given with --authorize-url.")
        }
        if authorizeURL != nil && clientId == nil {
            throw ValidationError("--client-id is required with --authorize-url.")
        }
        if timeout <= 0 { throw ValidationError("--timeout must be a positive number of seconds.") }
        if noBrowser && browserCommand != nil { throw ValidationError("--no-browser and --browser-command exclude each other.") }
        if let bad = parameters.first(where: { !$0.contains("=") || $0.hasPrefix("=") }) {
            throw ValidationError("--param takes name=value, not '\(bad)'.")
        }
        if let alias, alias.isEmpty || alias.contains(where: { $0.isWhitespace || $0 == "/" }) {
            throw ValidationError("--alias must be a non-empty name without spaces or '/'.")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let store: FileCredentialStore
        let launcher: (any BrowserLauncher)?
        do throws(OAuthError) {
            let mode = if let storage { storage } else { try StorageMode(environment: environment) }
            let setup = try mode.store(environment: environment, signingIn: true)
            store = setup.store
            if let notice = setup.notice { StandardError.line(notice) }
            launcher = try makeBrowserLauncher(environment: environment)
        } catch {
            throw CommandFailure(error)
        }

        var server = self.server
        if let issuer {
            do throws(OAuthError) {
                server = try await DiscoveryClient(cacheDirectory: DiscoveryClient.cacheDirectory(environment: environment)).discover(issuer: issuer).server
                if let revokeURL { server.revocationEndpoint = revokeURL }
                if let userinfoURL { server.userinfoEndpoint = userinfoURL }
            } catch {
                throw CommandFailure(error)
            }
        }
        if force { await revokeDefaultAccount(in: store) }
        let acceptsPaste = paste || (isatty(0) == 1 && (noBrowser || !hasDisplay(environment)))
        let reporter = LoginProgressReporter(store: store, timeoutSeconds: timeout, acceptsPaste: acceptsPaste)
        let coordinator = OAuthCoordinator(
            configuration: .init(server: server, client: client, timeout: .seconds(timeout), browserLauncher: launcher, alias: alias,
                                 pastedRedirects: acceptsPaste ? StandardInputRedirectSource() : nil),
            delegate: reporter, store: store)
        let interrupts = InterruptHandler { coordinator.cancel() }
        defer { interrupts.stop() }

        do {
            _ = try await coordinator.authenticate()
        } catch {
            throw CommandFailure(error)
        }
    }

    // MARK: - Building the configuration from the flags

    private var isSalesforce: Bool { authorizeURL == nil && issuer == nil }

    private var server: AuthorizationServer {
        if let authorizeURL, let tokenURL {
            return AuthorizationServer(authorizationEndpoint: authorizeURL, tokenEndpoint: tokenURL,
                                       revocationEndpoint: revokeURL, userinfoEndpoint: userinfoURL)
        }
        return Salesforce.server(loginHost: instanceURL ?? (sandbox ? Salesforce.sandboxLoginHost : Salesforce.productionLoginHost))
    }

    private var client: ClientConfiguration {
        let defaults = isSalesforce ? Salesforce.defaultRedirect : RedirectConfiguration()
        let requested = scopes.flatMap { $0.split(separator: " ").map(String.init) }
        return ClientConfiguration(
            clientId: clientId ?? Salesforce.defaultClientId,
            scopes: requested.isEmpty && isSalesforce ? Salesforce.defaultScopes : requested,
            redirect: RedirectConfiguration(host: callbackHost ?? defaults.host, port: port ?? defaults.port,
                                            path: callbackPath ?? defaults.path),
            additionalAuthorizationParameters: extraParameters)
    }

    /// `--login-hint`, `--param` and, with `--force`, `prompt=login`, in that order.
    private var extraParameters: [AuthorizationParameter] {
        var extra = [AuthorizationParameter]()
        if let loginHint { extra.append(AuthorizationParameter(name: "login_hint", value: loginHint)) }
        for parameter in parameters {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            extra.append(AuthorizationParameter(name: String(parts[0]), value: String(parts[1])))
        }
        if force && !extra.contains(where: { $0.name == "prompt" }) { extra.append(AuthorizationParameter(name: "prompt", value: "login")) }
        return extra
    }

    private func hasDisplay(_ environment: [String: String]) -> Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// `--force`: revoke the default account's tokens before signing in again (best effort).
    private func revokeDefaultAccount(in store: FileCredentialStore) async {
        guard let identifier = try? store.defaultIdentifier(), var credentials = try? store.load(identifier: identifier) else { return }
        credentials.refreshToken = try? store.refreshToken(of: credentials)
        let report = await TokenRevoker().revoke(credentials)
        StandardError.line("Revoking the tokens of \(credentials.displayLabel) first: \(report.summary).")
    }

    private func makeBrowserLauncher(environment: [String: String]) throws(OAuthError) -> (any BrowserLauncher)? {
        if noBrowser { return nil }
        guard let browserCommand else { return SystemBrowserLauncher(environment: environment) }
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
