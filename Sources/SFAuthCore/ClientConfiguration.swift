/// The registered client and what it asks for: everything the flow needs besides the server.
public struct ClientConfiguration: Sendable, Equatable {
    /// The `client_id` (RFC 6749 §2.2).
    public var clientId: String
    /// The `client_secret` of a confidential client; `nil` for a public client (the default, with PKCE).
    public var clientSecret: String?
    /// The requested `scope` values (RFC 6749 §3.3), sent space-separated in this order.
    public var scopes: [String]
    /// Where the loopback listener listens; the redirect URI is derived from it.
    public var redirect: RedirectConfiguration
    /// Extra authorization request parameters (`login_hint`, `prompt`, provider hints), sent after
    /// the standard ones, in order.
    public var additionalAuthorizationParameters: [AuthorizationParameter]
    /// How `clientSecret` is sent (RFC 6749 §2.3.1): in the body unless the server wants HTTP Basic.
    public var authentication: ClientAuthentication = .post
    /// The protected resource the tokens are for (RFC 8707 `resource`), sent on the authorization
    /// request, the code exchange and every refresh — a server that enforces RFC 8707 refuses a
    /// token request without it. `nil` (the default): no resource is named.
    public var resource: String?

    /// Creates a client configuration.
    ///
    /// - Parameters:
    ///   - clientId: the `client_id`.
    ///   - clientSecret: the secret of a confidential client; `nil` for a public one.
    ///   - scopes: the scopes to ask for.
    ///   - redirect: where the loopback listener listens.
    ///   - additionalAuthorizationParameters: extra authorization request parameters.
    ///   - resource: the protected resource the tokens are for (RFC 8707); `nil` for none.
    public init(
        clientId: String, clientSecret: String? = nil, scopes: [String] = [],
        redirect: RedirectConfiguration = RedirectConfiguration(),
        additionalAuthorizationParameters: [AuthorizationParameter] = [], resource: String? = nil
    ) {
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.redirect = redirect
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
        self.resource = resource
    }

    /// The `resource` parameter (RFC 8707 §2) for requests that carry one.
    var resourceParameter: [(String, String)] {
        resource.map { [("resource", $0)] } ?? []
    }

    /// The `scope` parameter (RFC 6749 §3.3) for requests that carry one: empty when no scopes are
    /// configured, so the server applies its default.
    var scopeParameter: [(String, String)] {
        scopes.isEmpty ? [] : [("scope", scopes.joined(separator: " "))]
    }

    /// Whether OpenID Connect is requested (the `openid` scope), which adds a `nonce`.
    public var requestsOpenID: Bool { scopes.contains("openid") }

    /// Checks the redirect and that no extra parameter replaces one the flow itself sends.
    public func validate() throws(OAuthError) {
        try redirect.validate()
        for parameter in additionalAuthorizationParameters {
            if AuthorizationParameter.reservedNames.contains(parameter.name) {
                throw .configuration("the authorization parameter '\(parameter.name)' is set by the sign-in itself and cannot be given")
            }
            if parameter.name.isEmpty { throw .configuration("an authorization parameter has an empty name") }
            if parameter.name == "resource", resource != nil {
                throw .configuration("the resource is given once: leave out the authorization parameter 'resource'")
            }
        }
        if let resource { try ProtectedResource.requireValid(resource) }
    }
}

/// One name/value pair of an authorization request.
public struct AuthorizationParameter: Sendable, Equatable {
    /// Parameters the flow sets itself (RFC 6749 §4.1.1, RFC 7636 §4.3, OIDC Core §3.1.2.1); scopes
    /// are given as scopes.
    public static let reservedNames: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "nonce",
    ]

    /// The parameter name, e.g. `login_hint`.
    public var name: String
    /// The parameter value.
    public var value: String

    /// Creates a parameter.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// The loopback redirect (RFC 8252 §7.3): host name, port and path of `http://HOST:PORT/PATH`.
public struct RedirectConfiguration: Sendable, Equatable {
    /// The host in the redirect URI: `127.0.0.1` (default), `[::1]`, or `localhost` (Salesforce).
    public var host: String
    /// The port; 0 (default) lets the system pick a free one, for servers that accept any port.
    public var port: UInt16
    /// The callback path, beginning with `/`. Default: `/callback`.
    public var path: String

    /// Creates a redirect configuration.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, path: String = "/callback") {
        self.host = host
        self.port = port
        self.path = path
    }

    /// Checks that the host is loopback and the path is a plain absolute path.
    public func validate() throws(OAuthError) {
        guard ["127.0.0.1", "[::1]", "localhost"].contains(host) else {
            throw .configuration("the redirect host must be 127.0.0.1, [::1] or localhost, not '\(host)'")
        }
        guard path.hasPrefix("/"), !path.contains("?"), !path.contains("#"), !path.contains(" ") else {
            throw .configuration("the callback path must start with '/' and contain no '?', '#' or spaces: '\(path)'")
        }
    }

    /// The redirect URI for the port actually bound.
    package func redirectURI(boundPort: UInt16) -> String {
        "http://\(host):\(boundPort)\(path)"
    }
}
