/// A protected resource's metadata (RFC 9728 §2): which resource it describes and which
/// authorization servers issue tokens for it.
public struct ProtectedResourceMetadata: Sendable, Equatable {
    /// `resource`: equal to the resource it was fetched for (checked by `decode`).
    public var resource: String
    /// `authorization_servers`: the issuers of the servers that issue tokens for the resource.
    public var authorizationServers: [String]
    /// `scopes_supported`, when given.
    public var scopesSupported: [String]?

    /// Creates metadata from its fields.
    public init(resource: String, authorizationServers: [String], scopesSupported: [String]? = nil) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
    }

    /// Reads the metadata fetched from `location` for `resource`.
    ///
    /// - Throws: `OAuthError.invalidServerResponse` for a server failure (5xx) or a body that is not
    ///   JSON; `OAuthError.configuration` for any other answer that is not metadata, metadata for
    ///   another resource (RFC 9728 §3.3: it must be refused), or metadata naming no authorization
    ///   server.
    package static func decode(_ response: HTTPResponse, resource: String, location: String) throws(OAuthError) -> ProtectedResourceMetadata {
        let parsed = JSONValue.parse(response.body)
        if response.status >= 500 || (response.status == 200 && parsed == nil) {
            throw .invalidServerResponse(
                Problem(
                    "\(location) answered HTTP \(response.status) with \(TokenResponse.describe(response)) instead of protected resource metadata",
                    remedy: .tryAgainLater))
        }
        guard response.status == 200, let json = parsed, case .object = json else {
            throw .configuration("\(location) did not answer with protected resource metadata (HTTP \(response.status))")
        }
        guard let stated = json["resource"]?.stringValue else {
            throw .configuration("the protected resource metadata at \(location) has no 'resource'")
        }
        guard ProtectedResource.isSame(stated, resource) else {
            throw .configuration(
                "the protected resource metadata at \(location) is for '\(TerminalText.escaped(stated))', not \(resource): refused (RFC 9728 §3.3); check the URL"
            )
        }
        let servers: [String]
        if case .array(let values)? = json["authorization_servers"] { servers = values.compactMap(\.stringValue) } else { servers = [] }
        guard !servers.isEmpty else {
            throw .configuration("the protected resource metadata at \(location) names no authorization server")
        }
        var metadata = ProtectedResourceMetadata(resource: stated, authorizationServers: servers)
        if case .array(let values)? = json["scopes_supported"] { metadata.scopesSupported = values.compactMap(\.stringValue) }
        return metadata
    }

    /// The authorization server to sign in at: `chosen` when given (it must be one the metadata
    /// names), else the first one named.
    ///
    /// - Throws: `OAuthError.configuration` when `chosen` is not among them.
    public func authorizationServer(choosing chosen: String?) throws(OAuthError) -> String {
        guard let chosen else { return authorizationServers[0] }
        guard let named = authorizationServers.first(where: { $0 == chosen || trimmed($0) == trimmed(chosen) }) else {
            throw .configuration(
                "\(resource) does not name \(TerminalText.escaped(chosen)) as its authorization server; it names \(authorizationServers.map { TerminalText.escaped($0) }.joined(separator: ", "))"
            )
        }
        return named
    }

    private func trimmed(_ issuer: String) -> Substring {
        var issuer = Substring(issuer)
        while issuer.hasSuffix("/") { issuer = issuer.dropLast() }
        return issuer
    }
}
