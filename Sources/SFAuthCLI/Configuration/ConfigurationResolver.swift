import SFAuth

/// Resolves layers of settings — flags over environment over profile — on top of a preset and
/// sfauth's defaults, into what a login uses, remembering where each value came from.
///
/// **The server is chosen as a whole.** It is named by `login_url`, `instance_url`, `issuer`,
/// `authorize_url` with `token_url`, or a preset with a host of its own (`salesforce`,
/// `salesforce-sandbox`). The highest layer that names one decides the server alone: those keys in
/// lower layers are ignored, and so are their other endpoints (`revoke_url`, `userinfo_url`,
/// `jwks_url`, `device_authorization_url`), which may come only from that layer or higher ones. So
/// `--issuer` on the command line replaces a profile's explicit endpoints entirely instead of mixing
/// two servers, while `--revoke-url` over a profile's server adjusts that server.
///
/// **The preset goes with the server.** It is the highest `preset` at or above the deciding layer; a
/// lower layer's preset still applies when the server chosen is of its kind (`oidc` with an issuer,
/// `salesforce-mydomain` with an instance URL). Otherwise the server implies it: `instance_url` →
/// `salesforce-mydomain`, `login_url` or nothing at all → `salesforce`, an issuer or endpoints → none.
///
/// **Everything else is per key**: client id, scopes, redirect, parameters (by name) and the grant
/// values come from the highest layer that sets them, then the preset, then sfauth's defaults.
package struct ConfigurationResolver: Sendable {
    /// The layers, highest precedence first (typically flags, environment, the chosen profile).
    package var layers: [ConfigurationLayer]

    /// Creates a resolver for `layers`, highest precedence first.
    package init(layers: [ConfigurationLayer]) {
        self.layers = layers
    }

    /// The configuration a login uses.
    ///
    /// - Throws: `OAuthError.configuration`, starting with where the offending value came from
    ///   (`FILE:LINE:`, `flag --x:`, `env X:`): an unknown preset, two servers named in one layer, a
    ///   key the preset needs, endpoints that do not fit the server, an insecure URL, a bad redirect,
    ///   or a parameter sfauth sets itself.
    ///
    /// - Parameter reportingMissing: list a missing required value (the client id, a key the preset
    ///   needs) in `ResolvedConfiguration.missing` instead of throwing — for `sfauth config`, which
    ///   shows what a login would lack. The server and client are then placeholders.
    package func resolve(reportingMissing: Bool = false) throws(OAuthError) -> ResolvedConfiguration {
        let serverLayerIndex = try indexOfServerLayer()
        let serverLayer = serverLayerIndex.map { layers[$0] } ?? ConfigurationLayer()
        let (preset, presetChoice) = try choosePreset(serverLayerIndex: serverLayerIndex)
        let presetLayer = preset?.layer ?? ConfigurationLayer()
        let values = ConfigurationLookup(
            server: [serverLayer, presetLayer],
            endpoints: Array(layers.prefix(serverLayerIndex.map { $0 + 1 } ?? layers.count)) + [presetLayer],
            independent: layers + [presetLayer, Self.builtInDefaults],
            presetChoice: presetChoice)

        try values.requireOneServer()
        var missing = [MissingSetting]()
        if let preset, let presetChoice {
            if preset.provider.registration != nil, values[.clientId] == nil, !reportingMissing {
                let problem = Self.problem("the \(preset.name) preset signs in with a client you register at the provider", at: presetChoice.source)
                guard case .configuration(let message) = problem else { throw problem }
                throw .configuration(Problem(message.text, remedy: .registerClient(preset: preset.name)))
            }
            for key in preset.requires where values[key] == nil {
                guard reportingMissing else {
                    throw Self.problem("preset '\(preset.name)' needs \(key.rawValue); give \(key.waysToSet)", at: presetChoice.source)
                }
                missing.append(MissingSetting(name: key.rawValue, reason: "preset '\(preset.name)' needs it; give \(key.waysToSet)"))
            }
        }
        if reportingMissing && values.text(.clientId) == nil {
            missing.append(
                MissingSetting(
                    name: ConfigurationKey.clientId.rawValue,
                    reason: "required for this server; give \(ConfigurationKey.clientId.waysToSet)"))
        }
        let placeholder = ServerSelection.known(AuthorizationServer(authorizationEndpoint: "", tokenEndpoint: ""))
        let chosen: (selection: ServerSelection, notice: String?) =
            missing.isEmpty ? try self.server(values, preset: preset) : ((try? self.server(values, preset: preset)) ?? (placeholder, nil))
        let server = chosen.selection
        var client = try self.client(values, presetLayer: presetLayer, placeholderId: missing.isEmpty ? nil : "")
        var notices = [chosen.notice, preset?.provider.signInNotice].compactMap { $0 }
        if let preset, preset.provider.takesAudience {
            if let audience = values.text(.audience) {
                let parameter = AuthorizationParameter(name: "audience", value: audience.value)
                client.configuration.additionalAuthorizationParameters.append(parameter)
                client.parameters.append(Sourced(parameter, from: audience.source))
            } else {
                notices.append(
                    "\(preset.name): without --audience (your API's identifier) the access token is opaque, good only for the provider's userinfo endpoint."
                )
            }
        }
        var resolved = ResolvedConfiguration(
            server: server, client: client.configuration, preset: presetChoice,
            username: values.text(.username), jwtKeyFile: values.text(.jwtKeyFile), audience: values.text(.audience),
            settings: settings(values, server: server, parameters: client.parameters))
        resolved.missing = missing
        resolved.notices = notices
        if let browser = values[.browser], case .words(let arguments) = browser.value {
            resolved.browser = Sourced(arguments, from: browser.source)
        }
        return resolved
    }

    /// Every value in effect, in key order: the preset, the server (with a Salesforce host's derived
    /// endpoints), the client, the parameters after the redirect, the grant values.
    private func settings(_ values: ConfigurationLookup, server: ServerSelection, parameters: [Sourced<AuthorizationParameter>])
        -> [ResolvedSetting]
    {
        var settings = [ResolvedSetting]()
        if let choice = values.presetChoice { settings.append(ResolvedSetting(name: "preset", value: .text(choice.value), source: choice.source)) }
        for key in ConfigurationKey.allCases where key != .preset && key != .loginHint {
            if let value = values[key] { settings.append(ResolvedSetting(name: key.rawValue, value: value.value, source: value.source)) }
            if key == .deviceAuthorizationURL { settings += derivedEndpoints(server, values) }
            if key == .callbackPath {
                settings += parameters.map { parameter in
                    let name = parameter.value.name == "login_hint" ? "login_hint" : "params.\(parameter.value.name)"
                    return ResolvedSetting(name: name, value: .text(parameter.value.value), source: parameter.source)
                }
            }
        }
        return settings
    }

    // MARK: - Preset

    /// The preset a layer names; an unknown name is an error wherever it is.
    private func preset(of layer: ConfigurationLayer) throws(OAuthError) -> (Preset, Sourced<String>)? {
        guard let chosen = layer[.preset] else { return nil }
        let name = chosen.value.displayText
        guard let preset = Preset.named(name) else {
            throw Self.problem("unknown preset '\(name)'; presets: \(Preset.names.joined(separator: ", "))", at: chosen.source)
        }
        return (preset, Sourced(name, from: chosen.source))
    }

    /// The highest layer that names a server, by its keys or by a preset with a host of its own.
    private func indexOfServerLayer() throws(OAuthError) -> Int? {
        var found: Int?
        for (index, layer) in layers.enumerated() {
            let presetNamesServer = try preset(of: layer)?.0.namesServer == true
            let namesServer = presetNamesServer || layer.values.keys.contains { $0.role == .choosesServer && $0 != .preset }
            if namesServer && found == nil { found = index }
        }
        return found
    }

    /// The preset in effect and what chose it (see the type's documentation).
    private func choosePreset(serverLayerIndex: Int?) throws(OAuthError) -> (Preset?, Sourced<String>?) {
        let serverLayer = serverLayerIndex.map { layers[$0] } ?? ConfigurationLayer()
        for (index, layer) in layers.enumerated() {
            guard let (preset, choice) = try preset(of: layer) else { continue }
            let fitsServer = preset.requires.allSatisfy { $0.role != .choosesServer || serverLayer[$0] != nil }
            if index <= serverLayerIndex ?? index || fitsServer { return (preset, choice) }
            break
        }
        let implied: String?
        if serverLayer[.instanceURL] != nil {
            implied = "salesforce-mydomain"
        } else if serverLayer[.issuer] != nil || serverLayer[.authorizeURL] != nil || serverLayer[.tokenURL] != nil {
            implied = nil
        } else {
            implied = Preset.defaultName
        }
        guard let implied, let preset = Preset.named(implied) else { return (nil, nil) }
        return (preset, Sourced(implied, from: .builtIn))
    }

    // MARK: - Server

    /// The server `values` name, with what the person should know about the choice. A preset that
    /// knows its provider turns its keys (`host`, `tenant`, `authority`, `issuer`, `domain`) into the
    /// server (`ProviderPreset.discoveryTarget`); an issuer given outside the preset wins over them.
    private func server(_ values: ConfigurationLookup, preset: Preset?) throws(OAuthError) -> (selection: ServerSelection, notice: String?) {
        let endpointKeys: [ConfigurationKey] = [.revokeURL, .userinfoURL, .jwksURL, .deviceAuthorizationURL]
        for key in [ConfigurationKey.host, .tenant, .authority, .domain] {
            guard let value = values[key] else { continue }
            let takesIt: Bool
            switch preset?.provider.serverLocation {
            case .gitHubHost?, .gitLabHost?: takesIt = key == .host
            case .entraTenant?: takesIt = key == .tenant || key == .authority
            case .cognitoUserPool?: takesIt = key == .domain
            default: takesIt = false
            }
            guard takesIt else {
                let presets = key == .host ? "github and gitlab presets" : key == .domain ? "cognito preset" : "entra preset"
                throw Self.problem("\(key.rawValue) is for the \(presets); give --preset with it", at: value.source)
            }
        }
        if let preset, case .gitHubHost = preset.provider.serverLocation, let host = values.text(.host) {
            return (.known(try Self.checked(at: host.source) { () throws(OAuthError) in try GitHub.server(host: host.value) }), nil)
        }
        if let preset, Self.locatesItsOwnServer(preset.provider.serverLocation) {
            let issuer = values.text(.issuer)
            let explicitIssuer = issuer.flatMap { value -> Sourced<String>? in
                if case .preset = value.source { return nil }
                return value
            }
            let given = [values.text(.host), values.text(.tenant), values.text(.authority), values.text(.domain), issuer].compactMap { $0 }
            let source = explicitIssuer?.source ?? given.first { if case .preset = $0.source { false } else { true } }?.source ?? .builtIn
            let instance = ProviderPreset.Instance(
                host: values.text(.host)?.value, issuer: explicitIssuer?.value ?? issuer?.value, tenant: values.text(.tenant)?.value,
                authority: values.text(.authority)?.value, domain: values.text(.domain)?.value)
            guard let target = try Self.checked(at: source, { () throws(OAuthError) in try preset.provider.discoveryTarget(instance) }) else {
                preconditionFailure("presets located by issuer, host or tenant have a discovery target")
            }
            try Self.check(at: source) { () throws(OAuthError) in try EndpointURL.requireSecure(target.issuer, name: "issuer") }
            for key in endpointKeys {
                if let value = values.text(key) {
                    try Self.check(at: value.source) { () throws(OAuthError) in try EndpointURL.requireSecure(value.value, name: key.rawValue) }
                }
            }
            let overrides = EndpointOverrides(
                authorizationEndpoint: target.authorizationEndpoint, tokenEndpoint: target.tokenEndpoint,
                revocationEndpoint: values.text(.revokeURL)?.value ?? target.revocationEndpoint,
                userinfoEndpoint: values.text(.userinfoURL)?.value ?? target.userinfoEndpoint, jwksURI: values.text(.jwksURL)?.value,
                deviceAuthorizationEndpoint: values.text(.deviceAuthorizationURL)?.value)
            return (.discover(issuer: target.issuer, overrides: overrides), target.notice)
        }
        return (try server(values, endpointKeys: endpointKeys), nil)
    }

    /// Whether a preset turns its own keys into the server (GitLab, Entra, Okta, Auth0, Cognito),
    /// rather than taking a Salesforce host, an issuer as it is, or explicit endpoints.
    private static func locatesItsOwnServer(_ location: ProviderPreset.ServerLocation) -> Bool {
        switch location {
        case .gitLabHost, .entraTenant, .oktaIssuer, .auth0Domain, .cognitoUserPool: return true
        case .issuer, .gitHubHost, .salesforceLoginHost, .salesforceMyDomain: return false
        }
    }

    /// The server named by a Salesforce host, an issuer, or explicit endpoints.
    private func server(_ values: ConfigurationLookup, endpointKeys: [ConfigurationKey]) throws(OAuthError) -> ServerSelection {
        if let host = values.text(.instanceURL) ?? values.text(.loginURL) {
            if let key = endpointKeys.first(where: { values[$0] != nil }), let value = values[key] {
                throw Self.problem(
                    "\(key.rawValue) is for servers given by issuer or by authorize_url and token_url; a Salesforce server's endpoints follow from its host",
                    at: value.source)
            }
            let server = Salesforce.server(loginHost: host.value)
            let name = values[.instanceURL] != nil ? ConfigurationKey.instanceURL.rawValue : ConfigurationKey.loginURL.rawValue
            try Self.check(at: host.source) { () throws(OAuthError) in try EndpointURL.requireSecure(server.issuer ?? host.value, name: name) }
            return .known(server)
        }
        for key in endpointKeys {
            if let value = values.text(key) {
                try Self.check(at: value.source) { () throws(OAuthError) in try EndpointURL.requireSecure(value.value, name: key.rawValue) }
            }
        }
        let issuer = values.text(.issuer)
        if let issuer {
            try Self.check(at: issuer.source) { () throws(OAuthError) in try EndpointURL.requireSecure(issuer.value, name: "issuer") }
        }
        guard let authorize = values.text(.authorizeURL), let token = values.text(.tokenURL) else {
            guard let issuer else {
                // requireOneServer() and the presets' requirements leave no other case.
                throw .configuration("no server is configured; give --issuer, or --authorize-url and --token-url, or a preset")
            }
            return .discover(
                issuer: issuer.value,
                overrides: EndpointOverrides(
                    revocationEndpoint: values.text(.revokeURL)?.value, userinfoEndpoint: values.text(.userinfoURL)?.value,
                    jwksURI: values.text(.jwksURL)?.value, deviceAuthorizationEndpoint: values.text(.deviceAuthorizationURL)?.value))
        }
        for (key, value) in [(ConfigurationKey.authorizeURL, authorize), (.tokenURL, token)] {
            try Self.check(at: value.source) { () throws(OAuthError) in try EndpointURL.requireSecure(value.value, name: key.rawValue) }
        }
        // Explicit endpoints are used as they are; an issuer given with them is what the server's
        // responses must name (RFC 9207 `iss`, the ID token's `iss`), without asking for metadata.
        return .known(
            AuthorizationServer(
                authorizationEndpoint: authorize.value, tokenEndpoint: token.value, revocationEndpoint: values.text(.revokeURL)?.value,
                userinfoEndpoint: values.text(.userinfoURL)?.value, issuer: issuer?.value, jwksURI: values.text(.jwksURL)?.value,
                deviceAuthorizationEndpoint: values.text(.deviceAuthorizationURL)?.value))
    }

    /// A Salesforce server's endpoints, which follow from its host, shown with the host's source.
    private func derivedEndpoints(_ server: ServerSelection, _ values: ConfigurationLookup) -> [ResolvedSetting] {
        guard case .known(let known) = server, known.flavor == .salesforce,
            let host = values[.instanceURL] ?? values[.loginURL]
        else { return [] }
        let endpoints: [(ConfigurationKey, String?)] = [
            (.authorizeURL, known.authorizationEndpoint), (.tokenURL, known.tokenEndpoint),
            (.revokeURL, known.revocationEndpoint), (.userinfoURL, known.userinfoEndpoint),
        ]
        return endpoints.compactMap { key, endpoint in
            endpoint.map { ResolvedSetting(name: key.rawValue, value: .text($0), source: host.source) }
        }
    }

    // MARK: - Client

    private func client(_ values: ConfigurationLookup, presetLayer: ConfigurationLayer, placeholderId: String? = nil) throws(OAuthError)
        -> (configuration: ClientConfiguration, parameters: [Sourced<AuthorizationParameter>])
    {
        guard let clientId = values.text(.clientId) ?? placeholderId.map({ Sourced($0, from: .builtIn) }) else {
            let named = [ConfigurationKey.issuer, .authorizeURL, .tokenURL].lazy.compactMap { values[$0] }.first
            throw Self.problem(
                "a client id is required for this server; give \(ConfigurationKey.clientId.waysToSet)",
                at: named?.source ?? .builtIn)
        }
        guard case .words(let scopes)? = values[.scopes]?.value,
            let host = values.text(.callbackHost), let path = values.text(.callbackPath),
            case .port(let port)? = values[.callbackPort]?.value
        else {
            preconditionFailure("the built-in defaults set scopes and the redirect")
        }
        try Self.check(at: host.source) { () throws(OAuthError) in try RedirectConfiguration(host: host.value).validate() }
        try Self.check(at: path.source) { () throws(OAuthError) in try RedirectConfiguration(path: path.value).validate() }

        let parameters = authorizationParameters(presetLayer: presetLayer)
        for parameter in parameters where AuthorizationParameter.reservedNames.contains(parameter.value.name) {
            throw Self.problem(
                "the authorization parameter '\(parameter.value.name)' is set by sfauth itself and cannot be given",
                at: parameter.source)
        }
        let configuration = ClientConfiguration(
            clientId: clientId.value, scopes: scopes, redirect: RedirectConfiguration(host: host.value, port: port, path: path.value),
            additionalAuthorizationParameters: parameters.map(\.value))
        return (configuration, parameters)
    }

    /// The extra parameters of every layer and the preset's (lowest), lowest first, a higher layer's
    /// replacing a lower one's of the same name in place; `login_hint` (the key) counts as the
    /// parameter and goes first.
    private func authorizationParameters(presetLayer: ConfigurationLayer) -> [Sourced<AuthorizationParameter>] {
        var merged = ConfigurationLayer()
        for layer in [presetLayer] + layers.reversed() {
            for parameter in layer.parameters {
                merged.addParameter(name: parameter.value.name, value: parameter.value.value, from: parameter.source)
            }
            if let hint = layer[.loginHint] { merged.addParameter(name: "login_hint", value: hint.value.displayText, from: hint.source) }
        }
        let hint = merged.parameters.filter { $0.value.name == "login_hint" }
        return hint + merged.parameters.filter { $0.value.name != "login_hint" }
    }

    // MARK: - Defaults and errors

    /// What applies when neither a layer nor the preset says: the generic loopback redirect
    /// (`http://127.0.0.1:<any port>/callback`, RFC 8252 §7.3) and no scopes.
    static let builtInDefaults: ConfigurationLayer = {
        var layer = ConfigurationLayer()
        let redirect = RedirectConfiguration()
        layer.set(.callbackHost, .text(redirect.host), from: .builtIn)
        layer.set(.callbackPort, .port(redirect.port), from: .builtIn)
        layer.set(.callbackPath, .text(redirect.path), from: .builtIn)
        layer.set(.scopes, .words([]), from: .builtIn)
        return layer
    }()

    /// A configuration error about one value, led by where the value came from: `FILE:LINE: …`,
    /// `flag --x: …`, `env X: …`.
    static func problem(_ message: String, at source: ConfigurationSource) -> OAuthError {
        if let (path, line) = source.fileLocation { return .configuration("\(path):\(line): \(message)") }
        return .configuration("\(source): \(message)")
    }

    /// The value of `body`, with `source` put in front of a configuration error it throws.
    static func checked<Value>(at source: ConfigurationSource, _ body: () throws(OAuthError) -> Value) throws(OAuthError) -> Value {
        do {
            return try body()
        } catch .configuration(let message) {
            throw problem(message.text, at: source)
        } catch {
            throw error
        }
    }

    /// Runs `body`, putting `source` in front of a configuration error it throws.
    static func check(at source: ConfigurationSource, _ body: () throws(OAuthError) -> Void) throws(OAuthError) {
        do {
            try body()
        } catch .configuration(let message) {
            throw problem(message.text, at: source)
        } catch {
            throw error
        }
    }
}

/// Finds a key's value in the layers that may give it (see `ConfigurationResolver` for which), and
/// checks that the server keys found name one server.
private struct ConfigurationLookup {
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
        let stack =
            switch key.role {
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
