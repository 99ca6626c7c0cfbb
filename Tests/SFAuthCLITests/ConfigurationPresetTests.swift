import SFAuth
import Testing

@testable import SFAuthCLI

/// The built-in presets: the library's `ProviderPreset` values, giving exactly the defaults sfauth
/// had before configuration files.
@Suite struct ConfigurationPresetTests {
    func resolve(_ layers: ConfigurationLayer...) throws -> ResolvedConfiguration {
        try ConfigurationResolver(layers: layers).resolve()
    }

    func layer(_ values: [ConfigurationKey: String], from source: ConfigurationSource = .flag("--x")) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        for (key, value) in values { layer.set(key, .text(value), from: source) }
        return layer
    }

    @Test("the presets are the library's, each a layer of its own source")
    func presetsAreTheLibrarysValues() throws {
        #expect(
            Preset.names == [
                "auth0", "cognito", "entra", "github", "gitlab", "google", "keycloak", "oidc", "okta", "salesforce", "salesforce-mydomain",
                "salesforce-sandbox",
            ])
        for name in Preset.names {
            let preset = try #require(Preset.named(name))
            #expect(preset.provider == ProviderPreset.named(name))
            #expect(!preset.summary.isEmpty)
            #expect(preset.layer.values.values.allSatisfy { $0.source == .preset(name) })
        }
        #expect(Preset.named("nope") == nil)
        #expect(Preset.named("salesforce")?.requires == [])
        #expect(Preset.named("salesforce-mydomain")?.requires == [.instanceURL])
        #expect(Preset.named("oidc")?.requires == [.issuer, .clientId])
        #expect(Preset.named("salesforce")?.namesServer == true)
        #expect(Preset.named("oidc")?.namesServer == false)
        #expect(Preset.named("github")?.requires == [.clientId])
        #expect(Preset.named("github")?.namesServer == true)
        #expect(Preset.named("google")?.requires == [.clientId])
        #expect(Preset.named("google")?.layer.parameters.map(\.value.name) == ["access_type", "prompt"])
    }

    @Test("an embedder gets the same server and client from the library's preset")
    func libraryPresetsGiveServerAndClient() {
        #expect(ProviderPreset.salesforce.server() == Salesforce.server(loginHost: Salesforce.productionLoginHost))
        #expect(ProviderPreset.salesforceSandbox.server() == Salesforce.server(loginHost: Salesforce.sandboxLoginHost))
        #expect(ProviderPreset.salesforceMyDomain.server() == nil)
        #expect(ProviderPreset.github.server() == (try? GitHub.server()))
        #expect(ProviderPreset.github.server(host: "ghe.example.com")?.userinfoEndpoint == "https://ghe.example.com/api/v3/user")
        #expect(
            ProviderPreset.salesforceMyDomain.server(instanceURL: "https://acme.my.salesforce.com")
                == Salesforce.server(loginHost: "https://acme.my.salesforce.com"))
        #expect(ProviderPreset.oidc.server(instanceURL: "https://idp.example") == nil)
        #expect(
            ProviderPreset.salesforce.client()
                == ClientConfiguration(
                    clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                    redirect: Salesforce.defaultRedirect))
        #expect(ProviderPreset.oidc.client() == nil)
        #expect(ProviderPreset.oidc.client(clientId: "my-cli")?.scopes == ["openid", "offline_access"])
    }

    @Test("nothing configured: exactly the Salesforce defaults sfauth always had")
    func salesforceIsTheDefault() throws {
        let resolved = try resolve()
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.productionLoginHost)))
        #expect(
            resolved.client
                == ClientConfiguration(
                    clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                    redirect: Salesforce.defaultRedirect))
        #expect(resolved.preset == Sourced("salesforce", from: .builtIn))
        #expect(resolved.setting("client_id")?.source == .preset("salesforce"))
        #expect(resolved.setting("token_url")?.value == .text("https://login.salesforce.com/services/oauth2/token"))
    }

    @Test func salesforceSandbox() throws {
        let resolved = try resolve(layer([.preset: "salesforce-sandbox"], from: .flag("--sandbox")))
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.sandboxLoginHost)))
        #expect(
            resolved.client
                == ClientConfiguration(
                    clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                    redirect: Salesforce.defaultRedirect))
        #expect(resolved.preset == Sourced("salesforce-sandbox", from: .flag("--sandbox")))
    }

    @Test func salesforceMyDomainFromAnInstanceURL() throws {
        let named = try resolve(layer([.preset: "salesforce-mydomain", .instanceURL: "https://acme.my.salesforce.com"]))
        let implied = try resolve(layer([.instanceURL: "https://acme.my.salesforce.com"]))
        for resolved in [named, implied] {
            #expect(resolved.server == .known(Salesforce.server(loginHost: "https://acme.my.salesforce.com")))
            #expect(
                resolved.client
                    == ClientConfiguration(
                        clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                        redirect: Salesforce.defaultRedirect))
        }
        #expect(implied.preset == Sourced("salesforce-mydomain", from: .builtIn))
        #expect(
            throws: OAuthError.configuration(
                "flag --x: preset 'salesforce-mydomain' needs instance_url; give --instance-url or instance_url in the profile")
        ) {
            try resolve(layer([.preset: "salesforce-mydomain"]))
        }
    }

    @Test func oidcByIssuer() throws {
        let resolved = try resolve(layer([.preset: "oidc", .issuer: "https://idp.example", .clientId: "my-cli"]))
        #expect(resolved.server == .discover(issuer: "https://idp.example", overrides: EndpointOverrides()))
        #expect(
            resolved.client
                == ClientConfiguration(
                    clientId: "my-cli", scopes: ["openid", "offline_access"],
                    redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback")))
        #expect(
            throws: OAuthError.configuration(
                "flag --x: preset 'oidc' needs issuer; give --issuer, SFAUTH_ISSUER or issuer in the profile")
        ) {
            try resolve(layer([.preset: "oidc", .clientId: "c"]))
        }
        #expect(
            throws: OAuthError.configuration(
                "flag --x: preset 'oidc' needs client_id; give --client-id, SFAUTH_CLIENT_ID or client_id in the profile")
        ) {
            try resolve(layer([.preset: "oidc", .issuer: "https://idp.example"]))
        }
    }
}
