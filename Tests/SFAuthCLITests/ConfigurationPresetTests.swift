import Foundation
import Testing
@testable import SFAuthCLI
import SFAuth

/// The built-in presets: compiled in from `Resources/presets`, and giving exactly the defaults sfauth
/// had before configuration files.
@Suite struct ConfigurationPresetTests {
    /// `Resources/presets`, found from this file's path.
    static let presetsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources/presets")

    static let regenerate = "run `sh Resources/embed.sh presets` to regenerate Sources/SFAuthCore/Configuration/PresetFiles.swift"

    func resolve(_ layers: ConfigurationLayer...) throws -> ResolvedConfiguration {
        try ConfigurationResolver(layers: layers).resolve()
    }

    func layer(_ values: [ConfigurationKey: String], from source: ConfigurationSource = .flag("--x")) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        for (key, value) in values { layer.set(key, .text(value), from: source) }
        return layer
    }

    @Test("the embedded constants equal Resources/presets/*.toml")
    func embeddedPresetsMatchFiles() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.presetsDirectory.path)
            .filter { $0.hasSuffix(".toml") }.map { String($0.dropLast(".toml".count)) }.sorted()
        #expect(names == ["oidc", "salesforce", "salesforce-mydomain", "salesforce-sandbox"])
        for name in names {
            let file = try String(contentsOf: Self.presetsDirectory.appendingPathComponent(name + ".toml"), encoding: .utf8)
            guard let embedded = PresetFiles.all[name] else {
                Issue.record("Resources/presets/\(name).toml is not embedded: \(Self.regenerate)")
                continue
            }
            #expect(embedded == file, "Resources/presets/\(name).toml differs from its embedded copy: \(Self.regenerate)")
        }
        for name in PresetFiles.all.keys where !names.contains(name) {
            Issue.record("PresetFiles embeds \(name), which no longer exists: \(Self.regenerate)")
        }
        #expect(Preset.names == names)
    }

    @Test func everyPresetParsesWithItsOwnSource() throws {
        for name in Preset.names {
            let preset = try #require(try Preset.named(name))
            #expect(!preset.summary.isEmpty)
            #expect(preset.layer.values.values.allSatisfy { $0.source == .preset(name) })
        }
        #expect(try Preset.named("nope") == nil)
        #expect(try Preset.named("salesforce-mydomain")?.requires == [.instanceURL])
        #expect(try Preset.named("oidc")?.requires == [.issuer, .clientId])
    }

    @Test func aPresetFileIsCheckedLikeAProfile() {
        #expect(throws: OAuthError.configuration("Resources/presets/x.toml: a preset needs a description string")) {
            try Preset.parse("client_id = \"c\"\n", name: "x")
        }
        #expect(throws: OAuthError.configuration("Resources/presets/x.toml:2: requires names the unknown key 'isuer'")) {
            try Preset.parse("description = \"d\"\nrequires = [\"isuer\"]\n", name: "x")
        }
        #expect(throws: OAuthError.configuration("Resources/presets/x.toml:2: a preset has no table but [params]")) {
            try Preset.parse("description = \"d\"\n[profile.x]\n", name: "x")
        }
    }

    @Test("nothing configured: exactly the Salesforce defaults sfauth always had")
    func salesforceIsTheDefault() throws {
        let resolved = try resolve()
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.productionLoginHost)))
        #expect(resolved.client == ClientConfiguration(clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                                                       redirect: Salesforce.defaultRedirect))
        #expect(resolved.preset == Sourced("salesforce", from: .builtIn))
        #expect(resolved.setting("client_id")?.source == .preset("salesforce"))
        #expect(resolved.setting("token_url")?.value == .text("https://login.salesforce.com/services/oauth2/token"))
    }

    @Test func salesforceSandbox() throws {
        let resolved = try resolve(layer([.preset: "salesforce-sandbox"], from: .flag("--sandbox")))
        #expect(resolved.server == .known(Salesforce.server(loginHost: Salesforce.sandboxLoginHost)))
        #expect(resolved.client == ClientConfiguration(clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                                                       redirect: Salesforce.defaultRedirect))
        #expect(resolved.preset == Sourced("salesforce-sandbox", from: .flag("--sandbox")))
    }

    @Test func salesforceMyDomainFromAnInstanceURL() throws {
        let named = try resolve(layer([.preset: "salesforce-mydomain", .instanceURL: "https://acme.my.salesforce.com"]))
        let implied = try resolve(layer([.instanceURL: "https://acme.my.salesforce.com"]))
        for resolved in [named, implied] {
            #expect(resolved.server == .known(Salesforce.server(loginHost: "https://acme.my.salesforce.com")))
            #expect(resolved.client == ClientConfiguration(clientId: Salesforce.defaultClientId, scopes: Salesforce.defaultScopes,
                                                           redirect: Salesforce.defaultRedirect))
        }
        #expect(implied.preset == Sourced("salesforce-mydomain", from: .builtIn))
        #expect(throws: OAuthError.configuration(
            "flag --x: preset 'salesforce-mydomain' needs instance_url; give --instance-url or instance_url in the profile")) {
            try resolve(layer([.preset: "salesforce-mydomain"]))
        }
    }

    @Test func oidcByIssuer() throws {
        let resolved = try resolve(layer([.preset: "oidc", .issuer: "https://idp.example", .clientId: "my-cli"]))
        #expect(resolved.server == .discover(issuer: "https://idp.example", overrides: EndpointOverrides()))
        #expect(resolved.client == ClientConfiguration(clientId: "my-cli", scopes: ["openid", "offline_access"],
                                                       redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback")))
        #expect(throws: OAuthError.configuration(
            "flag --x: preset 'oidc' needs issuer; give --issuer, SFAUTH_ISSUER or issuer in the profile")) {
            try resolve(layer([.preset: "oidc", .clientId: "c"]))
        }
        #expect(throws: OAuthError.configuration(
            "flag --x: preset 'oidc' needs client_id; give --client-id, SFAUTH_CLIENT_ID or client_id in the profile")) {
            try resolve(layer([.preset: "oidc", .issuer: "https://idp.example"]))
        }
    }
}
