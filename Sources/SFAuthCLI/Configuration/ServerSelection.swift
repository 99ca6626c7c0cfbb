import SFAuth
/// The authorization server a configuration chose: known endpoints, or an issuer whose endpoints are
/// read from its metadata when signing in (`DiscoveryClient`, OpenID Connect Discovery / RFC 8414).
package enum ServerSelection: Sendable, Equatable {
    /// Endpoints known without asking the server (a Salesforce host, or explicit endpoints).
    case known(AuthorizationServer)
    /// An issuer to discover, with endpoints given explicitly that replace the discovered ones.
    case discover(issuer: String, overrides: EndpointOverrides)

    /// The issuer whose metadata must be fetched, or `nil` when the endpoints are known.
    package var issuerToDiscover: String? {
        if case .discover(let issuer, _) = self { return issuer }
        return nil
    }
}

/// Endpoints given explicitly next to an issuer; each replaces the discovered one when set.
package struct EndpointOverrides: Sendable, Equatable {
    /// `revoke_url`: replaces the `revocation_endpoint`.
    package var revocationEndpoint: String?
    /// `userinfo_url`: replaces the `userinfo_endpoint`.
    package var userinfoEndpoint: String?
    /// `jwks_url`: replaces the `jwks_uri`.
    package var jwksURI: String?
    /// `device_authorization_url`: replaces the `device_authorization_endpoint`.
    package var deviceAuthorizationEndpoint: String?

    /// Creates overrides; `nil` keeps the discovered endpoint.
    package init(revocationEndpoint: String? = nil, userinfoEndpoint: String? = nil, jwksURI: String? = nil,
                deviceAuthorizationEndpoint: String? = nil) {
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.jwksURI = jwksURI
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
    }

    /// `server` with the overridden endpoints replaced.
    package func applied(to server: AuthorizationServer) -> AuthorizationServer {
        var server = server
        if let revocationEndpoint { server.revocationEndpoint = revocationEndpoint }
        if let userinfoEndpoint { server.userinfoEndpoint = userinfoEndpoint }
        if let jwksURI { server.jwksURI = jwksURI }
        if let deviceAuthorizationEndpoint { server.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint }
        return server
    }
}
