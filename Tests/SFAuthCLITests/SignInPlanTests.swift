import FoundationEssentials
import SFAuth
import Testing

@testable import SFAuthCLI

/// Every decision `sfauth login` makes before anything happens, by table: command line +
/// configuration + stored account + terminal session → the plan.
@Suite struct SignInPlanTests {
    /// An environment with no configuration file anywhere.
    static let settings = EnvironmentSettings(app: .sfauth, environment: ["HOME": "/nonexistent/sfauth-plan-tests"])
    static let desktop = TerminalSession(hasDisplay: true)
    static let salesforce = Salesforce.server(loginHost: Salesforce.productionLoginHost)
    static let salesforceClient = ClientConfiguration(
        clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
        redirect: Salesforce.defaultRedirect)

    /// A request with these flags (each from its `--key` flag) and options.
    static func request(_ values: [ConfigurationKey: String] = [:], _ adjust: (inout SignInRequest) -> Void = { _ in }) -> SignInRequest {
        var request = SignInRequest()
        for (key, value) in values {
            let setting: SettingValue = key == .scopes ? .words(SettingValue.splitWords(value)) : .text(value)
            request.flags.set(key, setting, from: .flag(key.commandLineFlag ?? "--" + key.rawValue))
        }
        adjust(&request)
        return request
    }

    /// The plan for `request` with a configuration that has only the flags and `environment`.
    static func plan(
        _ request: SignInRequest, environment: [String: String] = [:], stored: OAuthCredentials? = nil,
        sfdx: SFDXAuthURL? = nil, secret: String? = nil, session: TerminalSession = desktop
    ) throws(OAuthError) -> SignInPlan {
        let settings = EnvironmentSettings(app: .sfauth, environment: Self.settings.environment.merging(environment) { $1 })
        let flags = request.flags
        let inputs = SignInInputs(
            configuration: { reportingMissing throws(OAuthError) in
                try LoadedConfiguration.load(flags: flags, settings: settings, reportingMissing: reportingMissing)
            },
            storedAccount: stored, sfdx: sfdx, clientSecret: secret, session: session)
        return try SignInPlan(request, inputs: inputs)
    }

    // MARK: - Server, client and grant

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: SignInRequest
        var environment: [String: String] = [:]
        var server: ServerSelection
        var clientId: String
        var grant: SignInPlan.GrantPlan
        var timeout: Int = SignInPlan.defaultBrowserTimeout
        var testDescription: String { name }
    }

    static let idp = ServerSelection.discover(issuer: "https://idp.example", overrides: EndpointOverrides())
    static let cases: [Case] = [
        Case(
            name: "nothing given: Salesforce's defaults, in the browser", request: request(),
            server: .known(salesforce), clientId: Salesforce.defaultClientId, grant: .browser),
        Case(
            name: "an issuer and a client", request: request([.issuer: "https://idp.example", .clientId: "cli"]),
            server: idp, clientId: "cli", grant: .browser),
        Case(
            name: "the client from the environment", request: request([.issuer: "https://idp.example"]),
            environment: ["SFAUTH_CLIENT_ID": "from-env"], server: idp, clientId: "from-env", grant: .browser),
        Case(
            name: "--device waits as long as a code lives",
            request: request([.issuer: "https://idp.example", .clientId: "cli"]) { $0.grant = .device },
            server: idp, clientId: "cli", grant: .deviceCode, timeout: DeviceAuthorization.maximumLifetime),
        Case(
            name: "--client-credentials", request: request([.issuer: "https://idp.example", .clientId: "svc"]) { $0.grant = .clientCredentials },
            server: idp, clientId: "svc", grant: .clientCredentials),
        Case(
            name: "--password asks for the username's password later",
            request: request([.issuer: "https://idp.example", .clientId: "cli", .username: "alice"]) { $0.grant = .password },
            server: idp, clientId: "cli", grant: .password(username: "alice")),
        Case(
            name: "a JWT key file with the username from the environment",
            request: request([.clientId: "3MVG9", .jwtKeyFile: "/keys/server.key"]) { $0.grant = .jwtKeyFile },
            environment: ["SFAUTH_USERNAME": "ci@acme.com"], server: .known(salesforce), clientId: "3MVG9",
            grant: .jwtBearer(keyFile: "/keys/server.key", keyID: nil, username: "ci@acme.com", audience: nil)),
        Case(
            name: "a JWT key file from the environment chooses that grant",
            request: request([.clientId: "3MVG9", .username: "ci@acme.com", .audience: "https://test.salesforce.com"]),
            environment: ["SFAUTH_JWT_KEY_FILE": "/keys/env.key"], server: .known(salesforce), clientId: "3MVG9",
            grant: .jwtBearer(keyFile: "/keys/env.key", keyID: nil, username: "ci@acme.com", audience: "https://test.salesforce.com")),
        Case(
            name: "--timeout", request: request { $0.timeout = 42 }, server: .known(salesforce), clientId: Salesforce.defaultClientId,
            grant: .browser, timeout: 42),
    ]

    @Test(arguments: cases)
    func serverClientAndGrant(_ example: Case) throws {
        let plan = try Self.plan(example.request, environment: example.environment)
        #expect(plan.server == example.server)
        #expect(plan.client.clientId == example.clientId)
        #expect(plan.grant == example.grant)
        #expect(plan.timeoutSeconds == example.timeout)
    }

    @Test func nothingGivenIsExactlySalesforceInTheBrowser() throws {
        let plan = try Self.plan(Self.request())
        #expect(
            plan
                == SignInPlan(
                    server: .known(Self.salesforce), client: Self.salesforceClient, grant: .browser, browser: .system,
                    timeoutSeconds: 300, acceptsPaste: false, alias: nil))
    }

    @Test func theClientSecretGoesWithTheClient() throws {
        let plan = try Self.plan(
            Self.request([.issuer: "https://idp.example", .clientId: "svc"]) { $0.grant = .clientCredentials },
            secret: "s3cret")
        #expect(plan.client.clientSecret == "s3cret")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var request: SignInRequest
        var message: String
        var testDescription: String { message }
    }

    @Test(arguments: [
        Refusal(
            request: request([.issuer: "https://idp.example", .clientId: "cli"]) { $0.grant = .password },
            message: "--password needs a username: give --username, SFAUTH_USERNAME or username in the profile"),
        Refusal(
            request: request([.clientId: "3MVG9", .jwtKeyFile: "/k"]),
            message: "the JWT bearer grant (flag --jwt-key-file) needs a username: give --username, SFAUTH_USERNAME or username in the profile"),
        Refusal(
            request: request([.audience: "https://aud.example"]),
            message: "flag --audience: audience is for the JWT bearer grant (or --preset auth0); give --jwt-key-file too"),
        Refusal(request: request { $0.browserCommand = "" }, message: "--browser-command is empty"),
        Refusal(
            request: request { $0.grant = .device },
            message:
                "Salesforce's device flow is not the standard one (RFC 8628) that --device speaks; without a browser here, run `sfauth login --no-browser` and open the URL on any machine (then paste the address back, or forward the port), or for CI sign in with --jwt-key-file or --sfdx-url-file"
        ),
        Refusal(
            request: request { $0.browserCommand = "firefox 'unbalanced" },
            message: "--browser-command: unterminated single quote in 'firefox 'unbalanced'"),
    ])
    func refusals(_ refusal: Refusal) {
        #expect(throws: OAuthError.configuration(Problem(refusal.message))) { try Self.plan(refusal.request) }
    }

    // MARK: - The browser, the paste and the prompt

    struct BrowserCase: Sendable, CustomTestStringConvertible {
        var name: String
        var request: SignInRequest
        var session: TerminalSession
        var browser: SignInPlan.BrowserPlan
        var acceptsPaste: Bool
        var testDescription: String { name }
    }

    @Test(arguments: [
        BrowserCase(name: "a desktop opens the system browser", request: request(), session: desktop, browser: .system, acceptsPaste: false),
        BrowserCase(
            name: "no display, a terminal: the system browser, and a paste", request: request(),
            session: TerminalSession(standardInputIsTerminal: true), browser: .system, acceptsPaste: true),
        BrowserCase(
            name: "SSH without a display prints the URL", request: request(),
            session: TerminalSession(isSSH: true, standardInputIsTerminal: true), browser: .printURL, acceptsPaste: true),
        BrowserCase(
            name: "SSH with $BROWSER uses it", request: request(),
            session: TerminalSession(isSSH: true, browserVariable: "w3m"), browser: .system, acceptsPaste: false),
        BrowserCase(
            name: "WSL over SSH opens Windows' browser", request: request(),
            session: TerminalSession(isSSH: true, isWSL: true), browser: .system, acceptsPaste: false),
        BrowserCase(
            name: "SSH with a forwarded display opens it", request: request(),
            session: TerminalSession(hasDisplay: true, isSSH: true, standardInputIsTerminal: true), browser: .system, acceptsPaste: false),
        BrowserCase(
            name: "--no-browser at a terminal takes a paste", request: request { $0.noBrowser = true },
            session: TerminalSession(hasDisplay: true, standardInputIsTerminal: true), browser: .printURL, acceptsPaste: true),
        BrowserCase(
            name: "--paste without a terminal", request: request { $0.paste = true }, session: desktop, browser: .system,
            acceptsPaste: true),
        BrowserCase(
            name: "--browser-command is split like a shell would", request: request { $0.browserCommand = "firefox --new-window 'a b'" },
            session: desktop, browser: .command(["firefox", "--new-window", "a b"]), acceptsPaste: false),
    ])
    func browser(_ example: BrowserCase) throws {
        let plan = try Self.plan(example.request, session: example.session)
        #expect(plan.browser == example.browser)
        #expect(plan.acceptsPaste == example.acceptsPaste)
    }

    @Test func aProfilesBrowserUnlessTheCommandLineNamesOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write(
            "config.toml",
            """
            default_profile = "p"
            [profile.p]
            browser = ["google-chrome", "--profile-directory=Work"]
            """)
        let environment = ["SFAUTH_CONFIG": directory.path + "/config.toml"]
        #expect(try Self.plan(Self.request(), environment: environment).browser == .command(["google-chrome", "--profile-directory=Work"]))
        #expect(try Self.plan(Self.request { $0.browserCommand = "firefox" }, environment: environment).browser == .command(["firefox"]))
        #expect(try Self.plan(Self.request { $0.noBrowser = true }, environment: environment).browser == .printURL)
    }

    @Test func forceAsksForAFreshSignInUnlessAPromptIsGiven() throws {
        let forced = try Self.plan(Self.request { $0.force = true })
        #expect(forced.client.additionalAuthorizationParameters == [AuthorizationParameter(name: "prompt", value: "login")])
        var withPrompt = Self.request { $0.force = true }
        withPrompt.flags.addParameter(name: "prompt", value: "consent", from: .flag("--param"))
        #expect(try Self.plan(withPrompt).client.additionalAuthorizationParameters == [AuthorizationParameter(name: "prompt", value: "consent")])
        #expect(try Self.plan(Self.request()).client.additionalAuthorizationParameters.isEmpty)
    }

    // MARK: - An SFDX auth URL, a stored account

    @Test func anSFDXAuthURLNamesTheOrgTheClientAndTheToken() throws {
        let sfdx = try SFDXAuthURL(parsing: "force://PlatformCLI::5Aep861refresh@https://acme.my.salesforce.com")
        let plan = try Self.plan(Self.request { $0.sfdxURLFile = "-" }, sfdx: sfdx, secret: "from-env")
        #expect(plan.server == .known(Salesforce.server(loginHost: "https://acme.my.salesforce.com")))
        #expect(plan.client == ClientConfiguration(clientId: "PlatformCLI", clientSecret: "from-env"))
        #expect(plan.grant == .refreshToken("5Aep861refresh"))
        #expect(plan.notices.isEmpty)
        // Any other host is not refused (a proxy, a stub), but the person is told where the secrets go.
        let elsewhere = try SFDXAuthURL(parsing: "force://PlatformCLI::5Aep861refresh@https://sf.example.net")
        #expect(
            try Self.plan(Self.request { $0.sfdxURLFile = "-" }, sfdx: elsewhere, secret: "from-env").notices
                == [
                    "The SFDX auth URL names https://sf.example.net, which is not a Salesforce domain: its refresh token and the client secret go there."
                ])
    }

    static func storedAccount(grant: AuthType, username: String? = "alice") -> OAuthCredentials {
        let server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token",
            issuer: "https://idp.example")
        var credentials = OAuthCredentials(
            identifier: "idp.example/alice", server: server, clientId: "cli",
            redirectURI: "http://127.0.0.1:8765/cb", accessToken: "a", tokenType: "Bearer",
            issuedAt: Date(timeIntervalSince1970: 0))
        credentials.alias = "work"
        credentials.username = username
        credentials.recipe = SignInRecipe(
            grant: grant, scopes: ["openid", "read"], callbackHost: "127.0.0.1", callbackPort: 8765,
            callbackPath: "/cb", parameters: [.init(name: "kc_idp_hint", value: "github")], username: username)
        return credentials
    }

    @Test func aStoredAccountSignsInTheWayItDid() throws {
        let stored = Self.storedAccount(grant: .password)
        let plan = try Self.plan(Self.request { $0.account = "work" }, stored: stored, secret: "s")
        #expect(plan.server == .known(stored.server))
        #expect(
            plan.client
                == ClientConfiguration(
                    clientId: "cli", clientSecret: "s", scopes: ["openid", "read"],
                    redirect: RedirectConfiguration(host: "127.0.0.1", port: 8765, path: "/cb"),
                    additionalAuthorizationParameters: [
                        .init(name: "login_hint", value: "alice"),
                        .init(name: "kc_idp_hint", value: "github"),
                    ]))
        #expect(plan.grant == .password(username: "alice"))
        #expect(plan.notices.isEmpty)
        // --scope replaces the recipe's scopes; --device replaces its grant.
        let narrowed = try Self.plan(
            Self.request([.scopes: "read"]) {
                $0.account = "work"
                $0.grant = .device
            }, stored: stored)
        #expect(narrowed.client.scopes == ["read"])
        #expect(narrowed.grant == .deviceCode)
        #expect(narrowed.timeoutSeconds == DeviceAuthorization.maximumLifetime)
    }

    @Test func aStoredAccountIsNeverSignedInAtAnotherServer() throws {
        let stored = Self.storedAccount(grant: .browser)
        #expect(
            try Self.plan(Self.request([.issuer: "https://idp.example", .clientId: "cli"]) { $0.account = "work" }, stored: stored).server
                == .known(stored.server))
        #expect(
            throws: OAuthError.configuration(
                Problem(
                    "work signs in at https://idp.example, but the options name https://other.example; to sign in there, leave out --account and --force"
                ))
        ) {
            try Self.plan(Self.request([.issuer: "https://other.example", .clientId: "cli"]) { $0.account = "work" }, stored: stored)
        }
    }

    @Test func theLapsedDefaultAccountIsSaidToBeSignedInAgain() throws {
        let stored = Self.storedAccount(grant: .browser)
        let settings = Self.settings
        var inputs = SignInInputs(
            configuration: { reportingMissing throws(OAuthError) in
                try LoadedConfiguration.load(flags: ConfigurationLayer(), settings: settings, reportingMissing: reportingMissing)
            }, storedAccount: stored, session: Self.desktop)
        inputs.storedAccountIsTheLapsedDefault = true
        let plan = try SignInPlan(Self.request(), inputs: inputs)
        #expect(plan.server == .known(stored.server))
        #expect(
            plan.notices == [
                "Signing in again to work, the default account, whose sign-in is no longer valid (name a server, a profile or --account to sign in elsewhere)."
            ])
    }

    @Test func aPasswordAccountWithoutItsUsernameSaysWhatToGive() {
        #expect(
            throws: OAuthError.configuration(
                Problem(
                    "work was signed in with a password, but its username is not recorded; give --password --username NAME"))
        ) {
            try Self.plan(Self.request { $0.account = "work" }, stored: Self.storedAccount(grant: .password, username: nil))
        }
    }
}

/// A directory of its own under the system's temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("sfauth-cli-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path + "/" + name))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
