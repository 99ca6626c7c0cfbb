import SFAuth

/// A provider preset (`ProviderPreset`, the library's) as the lowest layer of a configuration:
/// what a profile with `preset = "NAME"` (or `--preset NAME`) starts from, and which keys it must
/// be given (`instance_url` for a My Domain, `issuer` and `client_id` for OIDC).
package struct Preset: Sendable, Equatable {
    /// The preset used when nothing names a server: `salesforce`.
    package static let defaultName = ProviderPreset.salesforce.name

    /// The library's preset.
    package var provider: ProviderPreset
    /// The keys that must be set where the preset is used.
    package var requires: [ConfigurationKey]
    /// The settings it gives, with source `preset NAME`.
    package var layer: ConfigurationLayer

    /// The name, e.g. `salesforce-sandbox`.
    package var name: String { provider.name }
    /// One line saying what it is for.
    package var summary: String { provider.summary }

    /// Whether the preset names its server itself (`salesforce`: login.salesforce.com), rather than
    /// requiring one (`salesforce-mydomain`, `oidc`).
    package var namesServer: Bool { layer.values.keys.contains { $0.role == .choosesServer } }

    /// Every preset name, sorted.
    package static var names: [String] { ProviderPreset.all.map(\.name).sorted() }

    /// The preset called `name`, or `nil` when there is none.
    package static func named(_ name: String) -> Preset? {
        ProviderPreset.named(name).map(Preset.init)
    }

    /// The configuration layer of `provider`.
    package init(_ provider: ProviderPreset) {
        self.provider = provider
        let source = ConfigurationSource.preset(provider.name)
        var layer = ConfigurationLayer()
        switch provider.serverLocation {
        case .salesforceLoginHost(let host):
            layer.set(.loginURL, .text(host), from: source)
            requires = []
        case .salesforceMyDomain:
            requires = [.instanceURL]
        case .issuer, .oktaIssuer, .auth0Domain:
            if let issuer = provider.issuer {
                layer.set(.issuer, .text(issuer), from: source)
                requires = []
            } else {
                requires = [.issuer]
            }
        case .cognitoUserPool:
            requires = [.issuer, .domain]
        case .gitHubHost:
            layer.set(.host, .text(GitHub.defaultHost), from: source)
            requires = []
        case .gitLabHost:
            layer.set(.host, .text(GitLab.defaultHost), from: source)
            requires = []
        case .entraTenant:
            layer.set(.tenant, .text(Entra.defaultTenant), from: source)
            layer.set(.authority, .text(Entra.defaultAuthority), from: source)
            requires = []
        }
        if let clientId = provider.clientId {
            layer.set(.clientId, .text(clientId), from: source)
        } else {
            requires.append(.clientId)
        }
        layer.set(.scopes, .words(provider.scopes), from: source)
        layer.set(.callbackHost, .text(provider.redirect.host), from: source)
        layer.set(.callbackPort, .port(provider.redirect.port), from: source)
        layer.set(.callbackPath, .text(provider.redirect.path), from: source)
        for parameter in provider.authorizationParameters {
            layer.addParameter(name: parameter.name, value: parameter.value, from: source)
        }
        self.layer = layer
    }
}
