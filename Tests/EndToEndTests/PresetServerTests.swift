import Foundation
import SFAuth
import Testing

/// `DiscoveryClient.server(for:at:)`, what an embedding program calls with a preset: against the
/// real test server's metadata for the issuer presets, without a request for GitHub.
@Suite struct PresetServerTests {
    @Test func anIssuerPresetIsDiscoveredAtTheInstance() async throws {
        let env = try TestEnvironment()
        let issuer = try env.value("SFAUTH_TEST_ISSUER")
        let discovery = DiscoveryClient(cacheDirectory: nil)
        let server = try await discovery.server(for: .keycloak, at: ProviderPreset.Instance(issuer: issuer))
        #expect(server == (try await discovery.discover(issuer: issuer)).server)
        #expect(server.tokenEndpoint == (try env.value("SFAUTH_TEST_TOKEN_URL")))
    }

    @Test func gitHubIsKnownWithoutMetadata() async throws {
        let server = try await DiscoveryClient(cacheDirectory: nil).server(for: .github, at: ProviderPreset.Instance(host: "ghe.example.com"))
        #expect(server.tokenEndpoint == "https://ghe.example.com/login/oauth/access_token")
        #expect(server.userinfoEndpoint == "https://ghe.example.com/api/v3/user")
        #expect(server.flavor == .github)
    }

    @Test func aPresetWithoutItsKeyIsAConfigurationError() async {
        await #expect(throws: OAuthError.self) { try await DiscoveryClient(cacheDirectory: nil).server(for: .okta) }
        await #expect(throws: OAuthError.self) { try await DiscoveryClient(cacheDirectory: nil).server(for: .salesforceMyDomain) }
        #expect(ProviderPreset.auth0.client(clientId: "c", audience: "https://api")?.additionalAuthorizationParameters.last?.value == "https://api")
        #expect(ProviderPreset.okta.client(clientId: "c", audience: "https://api")?.additionalAuthorizationParameters.isEmpty == true)
    }
}
