import SFAuth
import Testing

@testable import SFAuthCLI

/// Precedence (flags > environment > profile > preset > default), provenance, and how the keys that
/// name a server override as a group.
@Suite struct ConfigurationResolverTests {
    let path = "/home/me/.config/sfauth/config.toml"

    /// A profile from the text of a `[profile.p]` table (its `[profile.p.params]` may follow).
    func profile(_ text: String) throws -> ConfigurationLayer {
        try ConfigurationFile.parse("[profile.p]\n" + text, path: path).profile(Sourced("p", from: .builtIn))
    }

    func flags(_ values: [ConfigurationKey: String], parameters: [(String, String)] = []) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        for (key, value) in values {
            layer.set(key, .text(value), from: .flag(key == .preset && value == "salesforce-sandbox" ? "--sandbox" : key.commandLineFlag ?? "--?"))
        }
        for (name, value) in parameters { layer.addParameter(name: name, value: value, from: .flag("--param")) }
        return layer
    }

    func resolve(
        flags: ConfigurationLayer = ConfigurationLayer(), environment: [String: String] = [:],
        profile: ConfigurationLayer? = nil
    ) throws(OAuthError) -> ResolvedConfiguration {
        let settings = EnvironmentSettings(app: .sfauth, environment: environment)
        return try ConfigurationResolver(layers: [flags, .environment(settings)] + (profile.map { [$0] } ?? [])).resolve()
    }

    /// Line `number` of a profile's text: the file's line `number + 1`, after the `[profile.p]` header.
    func line(_ number: Int, _ table: String = "profile.p") -> ConfigurationSource {
        .file(path: path, line: number + 1, table: table)
    }

    // MARK: - Precedence and provenance

    @Test func flagsOverEnvironmentOverProfileOverPreset() throws {
        let file = try profile(
            """
            client_id = "from-file"
            scopes = ["api", "web"]
            callback_port = 8080
            login_hint = "file@example.test"
            """)
        let environment = ["SFAUTH_CLIENT_ID": "from-env", "SFAUTH_SCOPES": " api  refresh_token "]

        let all = try resolve(flags: flags([.clientId: "from-flag"]), environment: environment, profile: file)
        #expect(all.client.clientId == "from-flag")
        #expect(all.setting("client_id")?.source == .flag("--client-id"))
        #expect(all.client.scopes == ["api", "refresh_token"])
        #expect(all.setting("scopes")?.source == .environment("SFAUTH_SCOPES"))
        #expect(all.client.redirect == RedirectConfiguration(host: "localhost", port: 8080, path: "/OauthRedirect"))
        #expect(all.setting("callback_port")?.source == line(3))
        #expect(all.setting("callback_host")?.source == .preset("salesforce"))
        #expect(all.setting("login_hint") == ResolvedSetting(name: "login_hint", value: .text("file@example.test"), source: line(4)))

        let withoutFlags = try resolve(environment: environment, profile: file)
        #expect(withoutFlags.client.clientId == "from-env")
        #expect(withoutFlags.setting("client_id")?.source == .environment("SFAUTH_CLIENT_ID"))

        let fileOnly = try resolve(profile: file)
        #expect(fileOnly.client.clientId == "from-file" && fileOnly.client.scopes == ["api", "web"])
        #expect(fileOnly.setting("client_id")?.source == line(1))
    }

    @Test func emptyEnvironmentVariablesCountAsUnset() throws {
        let resolved = try resolve(environment: ["SFAUTH_CLIENT_ID": "", "SFAUTH_ISSUER": "  "])
        #expect(resolved.client.clientId == Salesforce.defaultClientId)
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.productionLoginHost)))
    }

    @Test func genericServersGetTheLoopbackDefaults() throws {
        let resolved = try resolve(flags: flags([.authorizeURL: "https://idp.example/a", .tokenURL: "https://idp.example/t", .clientId: "c"]))
        #expect(resolved.preset == nil)
        #expect(resolved.client == ClientConfiguration(clientId: "c", scopes: [], redirect: RedirectConfiguration()))
        #expect(resolved.setting("callback_path")?.source == .builtIn)
        #expect(
            resolved.server == .known(AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")))
    }

    @Test func parametersMergeByNameAndTheLoginHintGoesFirst() throws {
        let file = try profile(
            """
            login_hint = "file@example.test"
            [profile.p.params]
            prompt = "consent"
            ui_locales = "de"
            """)
        let resolved = try resolve(
            flags: flags([.loginHint: "flag@example.test"], parameters: [("kc_idp_hint", "github"), ("prompt", "login")]),
            profile: file)
        #expect(
            resolved.client.additionalAuthorizationParameters == [
                .init(name: "login_hint", value: "flag@example.test"), .init(name: "prompt", value: "login"),
                .init(name: "ui_locales", value: "de"), .init(name: "kc_idp_hint", value: "github"),
            ])
        #expect(resolved.setting("params.prompt")?.source == .flag("--param"))
        #expect(resolved.setting("params.ui_locales")?.source == line(4, "profile.p.params"))
        #expect(resolved.setting("login_hint")?.source == .flag("--login-hint"))
    }

    @Test func grantValuesAreResolvedAndExposed() throws {
        let file = try profile(
            """
            username = "ci@example.test"
            audience = "https://login.salesforce.com"
            """)
        let resolved = try resolve(environment: ["SFAUTH_JWT_KEY_FILE": "/secrets/key.pem"], profile: file)
        #expect(resolved.username == Sourced("ci@example.test", from: line(1)))
        #expect(resolved.audience == Sourced("https://login.salesforce.com", from: line(2)))
        #expect(resolved.jwtKeyFile == Sourced("/secrets/key.pem", from: .environment("SFAUTH_JWT_KEY_FILE")))
        #expect(try resolve().username == nil)
    }

    // MARK: - The server overrides as a group

    @Test func anIssuerOnTheCommandLineReplacesTheProfilesEndpointsEntirely() throws {
        let file = try profile(
            """
            authorize_url = "https://a.example/authorize"
            token_url = "https://a.example/token"
            revoke_url = "https://a.example/revoke"
            client_id = "c"
            """)
        let resolved = try resolve(flags: flags([.issuer: "https://b.example"]), profile: file)
        #expect(resolved.server == .discover(issuer: "https://b.example", overrides: EndpointOverrides()))
        #expect(resolved.setting("revoke_url") == nil)
        #expect(resolved.client.clientId == "c")  // the client is per key
    }

    @Test func anEndpointOnTheCommandLineAdjustsTheProfilesServer() throws {
        let file = try profile(
            """
            authorize_url = "https://a.example/authorize"
            token_url = "https://a.example/token"
            revoke_url = "https://a.example/revoke"
            client_id = "c"
            """)
        let resolved = try resolve(flags: flags([.revokeURL: "https://a.example/revoke2"]), profile: file)
        #expect(
            resolved.server
                == .known(
                    AuthorizationServer(
                        authorizationEndpoint: "https://a.example/authorize", tokenEndpoint: "https://a.example/token",
                        revocationEndpoint: "https://a.example/revoke2")))
        #expect(resolved.setting("authorize_url")?.source == line(1))
        #expect(resolved.setting("revoke_url")?.source == .flag("--revoke-url"))
    }

    @Test func issuerWithOverriddenEndpoints() throws {
        let file = try profile(
            """
            issuer = "https://idp.example"
            client_id = "c"
            userinfo_url = "https://idp.example/me"
            jwks_url = "https://idp.example/keys"
            device_authorization_url = "https://idp.example/device"
            """)
        let resolved = try resolve(flags: flags([.revokeURL: "https://idp.example/revoke"]), profile: file)
        let overrides = EndpointOverrides(
            revocationEndpoint: "https://idp.example/revoke", userinfoEndpoint: "https://idp.example/me",
            jwksURI: "https://idp.example/keys", deviceAuthorizationEndpoint: "https://idp.example/device")
        #expect(resolved.server == .discover(issuer: "https://idp.example", overrides: overrides))
        let discovered = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
            revocationEndpoint: "https://idp.example/r", issuer: "https://idp.example")
        #expect(
            overrides.applied(to: discovered)
                == AuthorizationServer(
                    authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
                    revocationEndpoint: "https://idp.example/revoke",
                    userinfoEndpoint: "https://idp.example/me", issuer: "https://idp.example", jwksURI: "https://idp.example/keys",
                    deviceAuthorizationEndpoint: "https://idp.example/device"))
    }

    @Test func aSandboxFlagReplacesAProfilesIssuer() throws {
        let file = try profile(
            """
            preset = "oidc"
            issuer = "https://idp.example"
            client_id = "3MVG9-own-app"
            """)
        let resolved = try resolve(flags: flags([.preset: "salesforce-sandbox"]), profile: file)
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.sandboxLoginHost)))
        #expect(resolved.preset == Sourced("salesforce-sandbox", from: .flag("--sandbox")))
        #expect(resolved.client.clientId == "3MVG9-own-app")
        #expect(resolved.client.redirect == Salesforce.defaultRedirect)
        #expect(resolved.setting("issuer") == nil)
    }

    @Test func aLoginURLInTheEnvironmentReplacesAProfilesIssuer() throws {
        let file = try profile("issuer = \"https://idp.example\"\nclient_id = \"c\"")
        let resolved = try resolve(environment: ["SFAUTH_LOGIN_URL": "https://test.salesforce.com"], profile: file)
        #expect(resolved.server == .known(Salesforce.server(loginHost: "https://test.salesforce.com")))
        #expect(resolved.preset == Sourced("salesforce", from: .builtIn))
        #expect(resolved.setting("login_url")?.source == .environment("SFAUTH_LOGIN_URL"))
        #expect(resolved.setting("token_url")?.source == .environment("SFAUTH_LOGIN_URL"))
    }

    @Test func aProfilesPresetGoesWithAnOverridingServerOfItsKind() throws {
        let oidc = try profile("preset = \"oidc\"\nissuer = \"https://a.example\"\nclient_id = \"c\"")
        let resolved = try resolve(flags: flags([.issuer: "https://b.example"]), profile: oidc)
        #expect(resolved.server.issuerToDiscover == "https://b.example")
        #expect(resolved.preset == Sourced("oidc", from: line(1)))
        #expect(resolved.client.scopes == ["openid", "offline_access"])

        // A My Domain profile's preset does not fit an issuer: it goes with the profile's server.
        let myDomain = try profile("preset = \"salesforce-mydomain\"\ninstance_url = \"https://acme.my.salesforce.com\"\nclient_id = \"c\"")
        let replaced = try resolve(flags: flags([.issuer: "https://b.example"]), profile: myDomain)
        #expect(replaced.preset == nil)
        #expect(replaced.client.redirect == RedirectConfiguration())
    }

    @Test func aPresetOnTheCommandLineUsesTheProfilesServerOfItsKind() throws {
        let file = try profile("issuer = \"https://idp.example\"\nclient_id = \"c\"")
        let resolved = try resolve(flags: flags([.preset: "oidc"]), profile: file)
        #expect(resolved.server.issuerToDiscover == "https://idp.example")
        #expect(resolved.preset == Sourced("oidc", from: .flag("--preset")))
        #expect(resolved.client.scopes == ["openid", "offline_access"])
    }

    @Test func issuerWithExplicitEndpointsIsTheExpectedIssuerWithoutDiscovery() throws {
        let resolved = try resolve(
            flags: flags([
                .issuer: "https://idp.example", .authorizeURL: "https://idp.example/a",
                .tokenURL: "https://idp.example/t", .clientId: "c",
            ]))
        #expect(
            resolved.server
                == .known(
                    AuthorizationServer(
                        authorizationEndpoint: "https://idp.example/a",
                        tokenEndpoint: "https://idp.example/t", issuer: "https://idp.example")))
    }

    // MARK: - Errors name their sources

    @Test func twoServersInOneLayer() throws {
        #expect(
            throws: OAuthError.configuration(
                "instance_url (flag --instance-url) and preset 'salesforce-sandbox' (flag --sandbox) name two different servers; give only one of them"
            )
        ) {
            try resolve(flags: flags([.preset: "salesforce-sandbox", .instanceURL: "https://a.my.salesforce.com"]))
        }
        #expect(
            throws: OAuthError.configuration(
                "instance_url (flag --instance-url) and issuer (flag --issuer) name two different servers; give only one of them")
        ) {
            try resolve(flags: flags([.issuer: "https://a.example", .instanceURL: "https://a.my.salesforce.com"]))
        }
        let file = try profile("preset = \"salesforce\"\nissuer = \"https://a.example\"")
        #expect(
            throws: OAuthError.configuration(
                "\(path):2: preset 'salesforce' (\(path):2 [profile.p]) and issuer (\(path):3 [profile.p]) name two different servers; give only one of them"
            )
        ) {
            try resolve(profile: file)
        }
    }

    @Test func endpointsThatDoNotFitTheServer() throws {
        #expect(throws: OAuthError.configuration("flag --authorize-url: authorize_url and token_url go together; token_url is missing")) {
            try resolve(flags: flags([.authorizeURL: "https://x.example/a"]))
        }
        #expect(
            throws: OAuthError.configuration(
                "flag --revoke-url: revoke_url is for servers given by issuer or by authorize_url and token_url; a Salesforce server's endpoints follow from its host"
            )
        ) {
            try resolve(flags: flags([.revokeURL: "https://x.example/r"]))
        }
    }

    @Test func aClientIdIsRequiredBeyondSalesforce() {
        #expect(
            throws: OAuthError.configuration(
                "flag --issuer: a client id is required for this server; give --client-id, SFAUTH_CLIENT_ID or client_id in the profile")
        ) {
            try resolve(flags: flags([.issuer: "https://idp.example"]))
        }
    }

    @Test func unknownPresetsAreRefusedWhereverTheyAre() throws {
        let names = Preset.names.joined(separator: ", ")
        #expect(throws: OAuthError.configuration("env SFAUTH_PRESET: unknown preset 'salesforce-prod'; presets: \(names)")) {
            try resolve(environment: ["SFAUTH_PRESET": "salesforce-prod"])
        }
        let file = try profile("preset = \"odic\"")
        #expect(throws: OAuthError.configuration("\(path):2: unknown preset 'odic'; presets: \(names)")) {
            try resolve(flags: flags([.issuer: "https://idp.example", .clientId: "c"]), profile: file)
        }
    }

    @Test func insecureOrMalformedValuesSayWhereTheyCameFrom() throws {
        let file = try profile(
            """
            authorize_url = "https://idp.example/a"
            token_url = "http://idp.example/t"
            client_id = "c"
            """)
        #expect(
            throws: OAuthError.configuration(
                "\(path):3: the token_url 'http://idp.example/t' uses plain http; only https is allowed, except to this machine (127.0.0.1, ::1, localhost)"
            )
        ) {
            try resolve(profile: file)
        }
        #expect(
            throws: OAuthError.configuration(
                "flag --instance-url: the instance_url 'http://acme.my.salesforce.com' uses plain http; only https is allowed, except to this machine (127.0.0.1, ::1, localhost)"
            )
        ) {
            try resolve(flags: flags([.instanceURL: "http://acme.my.salesforce.com"]))
        }
        #expect(throws: OAuthError.configuration("env SFAUTH_ISSUER: the issuer 'idp' is not an absolute http(s) URL")) {
            try resolve(environment: ["SFAUTH_ISSUER": "idp", "SFAUTH_CLIENT_ID": "c"])
        }
        let host = try profile("callback_host = \"0.0.0.0\"")
        #expect(throws: OAuthError.configuration("\(path):2: the redirect host must be 127.0.0.1, [::1] or localhost, not '0.0.0.0'")) {
            try resolve(profile: host)
        }
        #expect(
            throws: OAuthError.configuration(
                "flag --callback-path: the callback path must start with '/' and contain no '?', '#' or spaces: 'cb'")
        ) {
            try resolve(flags: flags([.callbackPath: "cb"]))
        }
    }

    @Test func parametersSfauthSetsItselfAreRefused() throws {
        #expect(throws: OAuthError.configuration("flag --param: the authorization parameter 'state' is set by sfauth itself and cannot be given")) {
            try resolve(flags: flags([:], parameters: [("state", "mine")]))
        }
        let file = try profile("[profile.p.params]\nredirect_uri = \"http://evil.example/\"")
        #expect(
            throws: OAuthError.configuration(
                "\(path):3: the authorization parameter 'redirect_uri' is set by sfauth itself and cannot be given")
        ) {
            try resolve(profile: file)
        }
    }
}
