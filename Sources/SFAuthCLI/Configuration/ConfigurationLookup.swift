import SFAuth
/// Finds a key's value in the layers that may give it (see `ConfigurationResolver` for which), and
/// checks that the server keys found name one server.
struct ConfigurationLookup {
    /// For keys that name the server: the deciding layer, then its preset.
    var server: [ConfigurationLayer]
    /// For the server's other endpoints: the deciding layer and those above it, then the preset.
    var endpoints: [ConfigurationLayer]
    /// For everything else: every layer, the preset, then sfauth's defaults.
    var independent: [ConfigurationLayer]
    /// The preset in effect and what chose it.
    var presetChoice: Sourced<String>?

    /// The value of `key`, from the highest layer that may give it.
    subscript(key: ConfigurationKey) -> Sourced<SettingValue>? {
        let stack = switch key.role {
        case .choosesServer: server
        case .serverEndpoint: endpoints
        case .independent: independent
        }
        return stack.lazy.compactMap { $0[key] }.first
    }

    /// The value of a text key.
    func text(_ key: ConfigurationKey) -> Sourced<String>? {
        self[key].flatMap { value in value.value.text.map { Sourced($0, from: value.source) } }
    }

    /// Throws unless the server keys name exactly one server: one Salesforce host, an issuer, or an
    /// authorization and a token endpoint (with or without the issuer their responses name).
    func requireOneServer() throws(OAuthError) {
        let hosts = [ConfigurationKey.instanceURL, .loginURL].compactMap(entry)
        if hosts.count == 2 { throw conflict(hosts[0], hosts[1]) }
        let endpoints = entry(.authorizeURL) ?? entry(.tokenURL)
        let servers = [hosts.first, endpoints ?? entry(.issuer)].compactMap { $0 }
        if servers.count > 1 { throw conflict(servers[0], servers[1]) }
        if let (key, value) = entry(.authorizeURL) ?? entry(.tokenURL), self[.authorizeURL] == nil || self[.tokenURL] == nil {
            let missing = key == .authorizeURL ? ConfigurationKey.tokenURL : .authorizeURL
            throw ConfigurationResolver.problem("authorize_url and token_url go together; \(missing.rawValue) is missing", at: value.source)
        }
    }

    private func entry(_ key: ConfigurationKey) -> (ConfigurationKey, Sourced<SettingValue>)? {
        self[key].map { (key, $0) }
    }

    /// "X (source) and Y (source) name two different servers", led by the file location when one is a file.
    private func conflict(_ first: (ConfigurationKey, Sourced<SettingValue>), _ second: (ConfigurationKey, Sourced<SettingValue>)) -> OAuthError {
        let message = "\(describe(first)) and \(describe(second)) name two different servers; give only one of them"
        if let inFile = [effectiveSource(first.1), effectiveSource(second.1)].first(where: { $0.fileLocation != nil }) {
            return ConfigurationResolver.problem(message, at: inFile)
        }
        return .configuration(Problem(message))
    }

    /// `issuer (flag --issuer)`, or for a value the preset gave, `preset 'salesforce-sandbox' (flag --sandbox)`.
    private func describe(_ entry: (ConfigurationKey, Sourced<SettingValue>)) -> String {
        if case .preset(let name) = entry.1.source { return "preset '\(name)' (\(effectiveSource(entry.1)))" }
        return "\(entry.0.rawValue) (\(entry.1.source))"
    }

    /// A value's source; for one the preset gave, what chose the preset.
    private func effectiveSource(_ value: Sourced<SettingValue>) -> ConfigurationSource {
        if case .preset = value.source, let presetChoice { return presetChoice.source }
        return value.source
    }
}
