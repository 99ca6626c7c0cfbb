import SFAuth

/// How `sfauth login` will sign in, decided before anything happens: the server, the client, the
/// grant, how the browser is reached, how long to wait. A pure value, made from the command line,
/// the configuration and (signing in again) the stored account — so every decision `login` makes is
/// table-tested without a server, a browser or a terminal. `SignIn` in the program carries it out.
package struct SignInPlan: Sendable, Equatable {
    /// The authorization server, or the issuer to discover it from.
    package var server: ServerSelection
    /// The client: id, secret, scopes, redirect, extra parameters (`prompt=login` with `--force`).
    package var client: ClientConfiguration
    /// The grant.
    package var grant: GrantPlan
    /// How the browser is reached.
    package var browser: BrowserPlan
    /// Seconds to wait for the redirect or the device code's approval.
    package var timeoutSeconds: Int
    /// Whether the address the browser ends up at may be pasted on standard input.
    package var acceptsPaste: Bool
    /// The alias the account gets (`--alias`).
    package var alias: String?
    /// The stored account signed in again (`--account`, `--force`, a lapsed default): someone else's
    /// sign-in does not replace it or take the default from it.
    package var account: String?
    /// Whether the scopes are to come from the discovered metadata (`DiscoveryDocument.defaultScopes`):
    /// a browser sign-in at an issuer for which nothing chose any scopes.
    package var scopesFromDiscovery = false
    /// What the person should know before the sign-in starts (a token about to go to a host that is
    /// not the provider's).
    package var notices: [String] = []

    /// How to sign in.
    package enum GrantPlan: Sendable, Equatable {
        /// The browser and the loopback redirect.
        case browser
        /// The device authorization grant (RFC 8628).
        case deviceCode
        /// The client credentials grant.
        case clientCredentials
        /// The password grant for `username`; the password is asked when the plan is carried out.
        case password(username: String)
        /// The JWT bearer grant, the assertion signed with the key in `keyFile`.
        case jwtBearer(keyFile: String, keyID: String?, username: String, audience: String?)
        /// A refresh token given from outside (an SFDX auth URL).
        case refreshToken(String)
    }

    /// How the browser is reached.
    package enum BrowserPlan: Sendable, Equatable {
        /// Not at all: the URL is printed (`--no-browser`, or SSH without a display).
        case printURL
        /// `xdg-open` (which honours `$BROWSER`), or Windows' browser from WSL.
        case system
        /// This command and its arguments (`--browser-command`, or a profile's `browser`).
        case command([String])
    }

    /// How long a browser sign-in waits for its redirect, unless `--timeout` says otherwise.
    package static let defaultBrowserTimeout = 300
}

extension SignInPlan {
    /// The plan for `request`.
    ///
    /// - Parameters:
    ///   - request: the command line.
    ///   - inputs: what was read for it: the configuration, the stored account, an SFDX auth URL,
    ///     the client secret, the terminal session.
    /// - Throws: `OAuthError.configuration` when the options, the configuration or the stored
    ///   account do not make a sign-in (each message says which and what to do).
    package init(_ request: SignInRequest, inputs: SignInInputs) throws(OAuthError) {
        let profileBrowser: [String]?
        if let sfdx = inputs.sfdx {
            // The URL names the org, the client and the refresh token: nothing else is needed.
            server = .known(Salesforce.server(loginHost: sfdx.instanceURL))
            client = ClientConfiguration(clientId: sfdx.clientId, clientSecret: sfdx.clientSecret ?? inputs.clientSecret)
            grant = .refreshToken(sfdx.refreshToken)
            profileBrowser = inputs.profileBrowser()
            if !sfdx.isSalesforceHost {
                let what = client.clientSecret == nil ? "its refresh token goes" : "its refresh token and the client secret go"
                notices.append("The SFDX auth URL names \(sfdx.instanceURL), which is not a Salesforce domain: \(what) there.")
            }
        } else if let target = try Self.resourceTarget(request, stored: inputs.storedAccount) {
            server = .protectedResource(target)
            client = Self.resourceClient(request, stored: inputs.storedAccount, secret: inputs.clientSecret)
            account = inputs.storedAccount?.identifier
            grant = .browser
            profileBrowser = inputs.profileBrowser()
        } else if let stored = inputs.storedAccount {
            // Signing in again: the account's own server and recipe, never the defaults.
            let again = StoredAccountSignIn(credentials: stored)
            try again.requireSameServer(flags: request.flags) { () throws(OAuthError) in try inputs.configuration(false).resolved.server }
            server = .known(stored.server)
            account = stored.identifier
            client = again.client(secret: inputs.clientSecret, scopes: request.scopes)
            // The login page asks for the account's own user: signing in again to bob must not
            // quietly sign in alice (who is still signed in to the browser).
            if let username = stored.username, stored.isIdentified,
                !client.additionalAuthorizationParameters.contains(where: { $0.name == "login_hint" })
            {
                client.additionalAuthorizationParameters.insert(AuthorizationParameter(name: "login_hint", value: username), at: 0)
            }
            if inputs.storedAccountIsTheLapsedDefault {
                notices.append(
                    "Signing in again to \(stored.displayLabel), the default account, whose sign-in is no longer valid "
                        + "(name a server, a profile or --account to sign in elsewhere).")
            }
            grant = request.grant == .device ? .deviceCode : try again.grantPlan()
            profileBrowser = inputs.profileBrowser()
        } else {
            let resolved = try inputs.configuration(false).resolved
            server = resolved.server
            client = resolved.client
            client.clientSecret = inputs.clientSecret
            grant = try Self.grant(for: request.grant, resolved)
            profileBrowser = resolved.browser?.value
            notices += resolved.notices
            if case .discover = server, grant == .browser, resolved.setting("scopes")?.source == .builtIn { scopesFromDiscovery = true }
        }
        if grant == .deviceCode, case .known(let known) = server, known.flavor == .salesforce {
            throw .configuration(
                Problem(
                    "Salesforce's device flow is not the standard one (RFC 8628) that --device speaks; without a browser here, "
                        + "run `sfauth login --no-browser` and open the URL on any machine (then paste the address back, or forward the port), "
                        + "or for CI sign in with --jwt-key-file or --sfdx-url-file"))
        }
        browser = try Self.browser(request, profileBrowser: profileBrowser, session: inputs.session)
        if request.force && !client.additionalAuthorizationParameters.contains(where: { $0.name == "prompt" }) {
            client.additionalAuthorizationParameters.append(AuthorizationParameter(name: "prompt", value: "login"))
        }
        acceptsPaste =
            request.paste
            || (inputs.session.standardInputIsTerminal && (request.noBrowser || !inputs.session.hasDisplay))
        // The device grant waits as long as its code is valid (the coordinator stops at the code's
        // expires_in); the browser sign-in five minutes.
        timeoutSeconds = request.timeout ?? (grant == .deviceCode ? DeviceAuthorization.maximumLifetime : Self.defaultBrowserTimeout)
        alias = request.alias
    }

    /// The grant a flag, or the configuration's JWT key file, chooses; the browser otherwise.
    private static func grant(for flag: SignInRequest.GrantFlag?, _ resolved: ResolvedConfiguration) throws(OAuthError) -> GrantPlan {
        let username = resolved.username?.value
        switch flag {
        case .device?: return .deviceCode
        case .clientCredentials?: return .clientCredentials
        case .password?:
            guard let username else { throw .configuration("--password needs a username: give \(ConfigurationKey.username.waysToSet)") }
            return .password(username: username)
        case .jwtKeyFile?, .sfdxURLFile?, nil:
            break
        }
        if let keyFile = resolved.jwtKeyFile {
            guard let username else {
                throw .configuration("the JWT bearer grant (\(keyFile.source)) needs a username: give \(ConfigurationKey.username.waysToSet)")
            }
            return .jwtBearer(keyFile: keyFile.value, keyID: nil, username: username, audience: resolved.audience?.value)
        }
        // With a preset that takes an audience (Auth0's), it went on the authorization request.
        if let audience = resolved.audience, resolved.client.additionalAuthorizationParameters.contains(where: { $0.name == "audience" }) == false {
            throw .configuration("\(audience.source): audience is for the JWT bearer grant (or --preset auth0); give --jwt-key-file too")
        }
        return .browser
    }

    /// `--no-browser`; else `--browser-command`, which wins over the profile's browser; else the
    /// system's — unless this is an SSH session without a display, where a browser would open on a
    /// screen nobody sees (or a text browser would take over this terminal): then the URL is
    /// printed, with the `ssh -L` line and a paste.
    private static func browser(_ request: SignInRequest, profileBrowser: [String]?, session: TerminalSession) throws(OAuthError) -> BrowserPlan {
        if request.noBrowser { return .printURL }
        if let commandLine = request.browserCommand {
            let arguments: [String]
            do { arguments = try splitCommandLine(commandLine) } catch { throw .configuration("--browser-command: \(error)") }
            guard !arguments.isEmpty else { throw .configuration("--browser-command is empty") }
            return .command(arguments)
        }
        if let profileBrowser { return .command(profileBrowser) }
        if session.isRemoteWithoutDisplay && !session.isWSL && session.browserVariable == nil { return .printURL }
        return .system
    }
}

/// What `SignInPlan` is made from besides the command line: what was read for it.
package struct SignInInputs: Sendable {
    /// Loads the configuration (file, profile, environment, flags): with `reportingMissing`, a missing
    /// client id is listed rather than thrown (enough to learn a profile's browser).
    package var configuration: @Sendable (_ reportingMissing: Bool) throws(OAuthError) -> LoadedConfiguration
    /// The stored account to sign in to again (`--account`, `--force`'s default account, or the
    /// default account whose sign-in lapsed when nothing else was named).
    package var storedAccount: OAuthCredentials?
    /// Whether `storedAccount` is the default account chosen because its sign-in lapsed and the
    /// command line named nothing else (a plain `sfauth login`).
    package var storedAccountIsTheLapsedDefault = false
    /// The SFDX auth URL of `--sfdx-url-file`.
    package var sfdx: SFDXAuthURL?
    /// The client secret (`--client-secret-file`, else `SFAUTH_CLIENT_SECRET`).
    package var clientSecret: String?
    /// The terminal session.
    package var session: TerminalSession

    /// Creates inputs.
    package init(
        configuration: @escaping @Sendable (_ reportingMissing: Bool) throws(OAuthError) -> LoadedConfiguration,
        storedAccount: OAuthCredentials? = nil, sfdx: SFDXAuthURL? = nil, clientSecret: String? = nil,
        session: TerminalSession = TerminalSession()
    ) {
        self.configuration = configuration
        self.storedAccount = storedAccount
        self.sfdx = sfdx
        self.clientSecret = clientSecret
        self.session = session
    }

    /// The browser a profile names, when the configuration can be read at all (a sign-in that does
    /// not otherwise need the configuration does not fail on it).
    func profileBrowser() -> [String]? {
        (try? configuration(true))?.resolved.browser?.value
    }
}
