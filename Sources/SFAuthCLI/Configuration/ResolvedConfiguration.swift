import SFAuth

/// What a login uses, resolved from flags, environment, profile and preset by `ConfigurationResolver`,
/// with where every value came from.
package struct ResolvedConfiguration: Sendable, Equatable {
    /// The authorization server, or the issuer to discover it from.
    package var server: ServerSelection
    /// The client: id, scopes, redirect and extra authorization parameters.
    package var client: ClientConfiguration
    /// The preset in effect and what chose it; `nil` when the server was given without one.
    package var preset: Sourced<String>?
    /// `username`: the user a non-browser grant signs in as, when set.
    package var username: Sourced<String>?
    /// `jwt_key_file`: the private key for JWT bearer assertions, when set.
    package var jwtKeyFile: Sourced<String>?
    /// `audience`: the `aud` of JWT bearer assertions, when set.
    package var audience: Sourced<String>?
    /// `browser`: the command (and arguments) that opens the browser, when set.
    package var browser: Sourced<[String]>? = nil
    /// Every value in effect, in the order `sfauth config` shows them.
    package var settings: [ResolvedSetting]
    /// Required values that are not set (only when resolved with `reportingMissing`).
    package var missing: [MissingSetting] = []
    /// What the person should know before signing in with this configuration (the server a preset
    /// chose, what a provider shows when its registration lacks something).
    package var notices: [String] = []

    /// Creates a resolved configuration.
    package init(
        server: ServerSelection, client: ClientConfiguration, preset: Sourced<String>?, username: Sourced<String>? = nil,
        jwtKeyFile: Sourced<String>? = nil, audience: Sourced<String>? = nil, settings: [ResolvedSetting]
    ) {
        self.server = server
        self.client = client
        self.preset = preset
        self.username = username
        self.jwtKeyFile = jwtKeyFile
        self.audience = audience
        self.settings = settings
    }

    /// The setting called `name` (`client_id`, `params.prompt`, …), when it is in effect.
    package func setting(_ name: String) -> ResolvedSetting? {
        settings.first { $0.name == name }
    }
}

/// One value in effect: its key, the value, and where it came from.
package struct ResolvedSetting: Sendable, Equatable {
    /// The key: a `ConfigurationKey` name, or `params.NAME` for an extra authorization parameter.
    package var name: String
    /// The value.
    package var value: SettingValue
    /// Where it came from.
    package var source: ConfigurationSource

    /// Creates a setting.
    package init(name: String, value: SettingValue, source: ConfigurationSource) {
        self.name = name
        self.value = value
        self.source = source
    }
}

/// A value a login needs that no layer sets, and how to set it.
package struct MissingSetting: Sendable, Equatable {
    /// The key, e.g. `client_id`.
    package var name: String
    /// Why it is needed and the ways to set it.
    package var reason: String

    /// Creates a missing setting.
    package init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

/// The authorization server a configuration chose: known endpoints, or an issuer whose endpoints are
/// read from its metadata when signing in (`DiscoveryClient`, OpenID Connect Discovery / RFC 8414).
package enum ServerSelection: Sendable, Equatable {
    /// Endpoints known without asking the server (a Salesforce host, or explicit endpoints).
    case known(AuthorizationServer)
    /// An issuer to discover, with endpoints given explicitly that replace the discovered ones.
    case discover(issuer: String, overrides: EndpointOverrides)
    /// A protected resource whose authorization server and client are to be found from its URL
    /// (`sfauth login --resource`; `ResourceSignIn`).
    case protectedResource(ResourceTarget)

    /// The issuer whose metadata must be fetched, or `nil` when the endpoints are known.
    package var issuerToDiscover: String? {
        if case .discover(let issuer, _) = self { return issuer }
        return nil
    }
}

/// A sign-in that starts from a protected resource (`sfauth login --resource URL`).
package struct ResourceTarget: Sendable, Equatable {
    /// The resource's URL.
    package var resource: String
    /// The authorization server to choose when the resource names several (`--issuer`), or the
    /// one a stored account signed in at.
    package var issuer: String?
    /// A Client ID Metadata Document's URL (`--client-metadata-url`).
    package var clientMetadataURL: String?
    /// Signing a stored account in again: the client id it signed in with, used as given unless
    /// it is the client sfauth registered at its server.
    package var storedClientId: String?
    /// The callback port the stored account signed in on, for that client id.
    package var storedCallbackPort: UInt16?
}

/// Endpoints given explicitly next to an issuer; each replaces the discovered one when set.
package struct EndpointOverrides: Sendable, Equatable {
    /// Replaces the `authorization_endpoint` (a Cognito user pool's domain).
    package var authorizationEndpoint: String?
    /// Replaces the `token_endpoint` (a Cognito user pool's domain).
    package var tokenEndpoint: String?
    /// `revoke_url`: replaces the `revocation_endpoint`.
    package var revocationEndpoint: String?
    /// `userinfo_url`: replaces the `userinfo_endpoint`.
    package var userinfoEndpoint: String?
    /// `jwks_url`: replaces the `jwks_uri`.
    package var jwksURI: String?
    /// `device_authorization_url`: replaces the `device_authorization_endpoint`.
    package var deviceAuthorizationEndpoint: String?

    /// Creates overrides; `nil` keeps the discovered endpoint.
    package init(
        authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, revocationEndpoint: String? = nil,
        userinfoEndpoint: String? = nil, jwksURI: String? = nil, deviceAuthorizationEndpoint: String? = nil
    ) {
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.jwksURI = jwksURI
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
    }

    /// `server` with the overridden endpoints replaced.
    package func applied(to server: AuthorizationServer) -> AuthorizationServer {
        var server = server
        if let authorizationEndpoint { server.authorizationEndpoint = authorizationEndpoint }
        if let tokenEndpoint { server.tokenEndpoint = tokenEndpoint }
        if let revocationEndpoint { server.revocationEndpoint = revocationEndpoint }
        if let userinfoEndpoint { server.userinfoEndpoint = userinfoEndpoint }
        if let jwksURI { server.jwksURI = jwksURI }
        if let deviceAuthorizationEndpoint { server.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint }
        return server
    }
}
