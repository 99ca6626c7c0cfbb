import SFAuthCore

/// Finds, from nothing but a protected resource's URL, the authorization server that issues tokens
/// for it — the MCP authorization specification's discovery: probe the resource, read the
/// `resource_metadata` of its `401` challenge (else RFC 9728's well-known locations), check that the
/// metadata is the resource's own, then read its authorization server's metadata (RFC 8414, OpenID
/// Connect as fallback) and require PKCE S256.
public struct ResourceDiscovery: Sendable {
    private let httpClient: any HTTPClient
    private let discoveryClient: DiscoveryClient

    /// What discovery found.
    public struct Found: Sendable, Equatable {
        /// The resource, in its canonical form (`ProtectedResource.canonical`): what the tokens are
        /// bound to and the account is keyed by.
        public var resource: String
        /// The resource's metadata (RFC 9728).
        public var metadata: ProtectedResourceMetadata
        /// The challenge the resource answered the probe with, when it sent one.
        public var challenge: BearerChallenge?
        /// The authorization server's metadata.
        public var authorizationServer: DiscoveryDocument

        /// The scopes to ask for when none were chosen: the challenge's, else those the resource's
        /// metadata lists (the MCP specification's order).
        public var suggestedScopes: [String] {
            if let scopes = challenge?.scopes, !scopes.isEmpty { return scopes }
            return metadata.scopesSupported ?? []
        }
    }

    /// Creates a discovery that sends its requests through `httpClient`.
    ///
    /// - Parameters:
    ///   - httpClient: probes the resource and fetches the metadata.
    ///   - discoveryClient: fetches (and caches) the authorization server's metadata.
    public init(httpClient: any HTTPClient, discoveryClient: DiscoveryClient) {
        self.httpClient = httpClient
        self.discoveryClient = discoveryClient
    }

    /// Discovers the authorization server of `resource`.
    ///
    /// - Parameters:
    ///   - resource: the protected resource's URL.
    ///   - issuer: the authorization server to use when the metadata names several (it must be one
    ///     of them); `nil` for the first.
    /// - Throws: `OAuthError.configuration` for anything that must not be trusted — metadata for
    ///   another resource, metadata a challenge places on another origin, an authorization server
    ///   over plain http for a remote resource, server metadata for another issuer or without S256 —
    ///   and when the resource publishes no metadata; `.network` when it cannot be reached.
    public func discover(resource: String, issuer: String? = nil) async throws(OAuthError) -> Found {
        let canonical = try ProtectedResource.canonical(resource)
        let probe = try await httpClient.sendForOAuth(
            HTTPRequest(method: "GET", url: canonical, headers: [("Accept", "application/json, text/event-stream")]))
        let challenge = BearerChallenge.of(probe)
        let metadata = try await resourceMetadata(of: canonical, challenge: challenge)
        let chosen = try metadata.authorizationServer(choosing: issuer)
        try ProtectedResource.requireAuthorizationServer(chosen, for: canonical)
        let server = try await discoveryClient.discover(issuer: chosen, forResource: true)
        guard server.listsS256 else {
            let listed = server.codeChallengeMethods.map { "lists only \($0.joined(separator: ", "))" } ?? "lists none"
            throw .configuration(
                Problem(
                    "\(chosen) does not list PKCE S256 among its code_challenge_methods_supported (it \(listed)); "
                        + "signing in to a protected resource without it is refused, as the MCP authorization specification requires"))
        }
        return Found(resource: canonical, metadata: metadata, challenge: challenge, authorizationServer: server)
    }

    /// The resource's metadata: at the challenge's `resource_metadata` when it names one (on the
    /// resource's own origin only), else at the first well-known location that has one.
    private func resourceMetadata(of resource: String, challenge: BearerChallenge?) async throws(OAuthError) -> ProtectedResourceMetadata {
        if let location = challenge?.resourceMetadata {
            guard ProtectedResource.isOwnMetadataLocation(location, for: resource) else {
                throw .configuration(
                    "\(resource) points at metadata on another origin (\(TerminalText.escaped(location))): refused, since anyone can answer with a challenge that names an authorization server of their choosing"
                )
            }
            try EndpointURL.requireSecure(location, name: "resource metadata URL")
            return try await fetchMetadata(at: location, for: resource)
        }
        let locations = ProtectedResource.metadataLocations(for: resource)
        for location in locations {
            let response = try await httpClient.sendForOAuth(HTTPRequest(method: "GET", url: location, headers: [("Accept", "application/json")]))
            if response.status == 404 { continue }
            return try ProtectedResourceMetadata.decode(response, resource: resource, location: location)
        }
        throw .configuration(
            "\(resource) publishes no protected resource metadata (RFC 9728): its answer named none, and \(locations.joined(separator: " and ")) answered 404; check the URL"
        )
    }

    private func fetchMetadata(at location: String, for resource: String) async throws(OAuthError) -> ProtectedResourceMetadata {
        let response = try await httpClient.sendForOAuth(HTTPRequest(method: "GET", url: location, headers: [("Accept", "application/json")]))
        return try ProtectedResourceMetadata.decode(response, resource: resource, location: location)
    }
}
