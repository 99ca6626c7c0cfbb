import FoundationEssentials

/// Dynamic Client Registration (RFC 7591) of sfauth as a native public client: what it asks an
/// authorization server for, and what it keeps of the answer.
public enum ClientRegistration {
    /// The registration request (RFC 7591 §3.1): a native application (`application_type`, OpenID
    /// Connect Dynamic Registration §2, asked for by MCP 2026-07-28) without a secret
    /// (`token_endpoint_auth_method: none`, PKCE protects the code), using the authorization code
    /// and refresh token grants, with one loopback redirect URI.
    ///
    /// - Parameters:
    ///   - endpoint: the server's `registration_endpoint`.
    ///   - redirectURI: the exact loopback redirect URI, port included (many servers compare it exactly).
    ///   - clientName: the name the server shows on its consent page.
    ///   - scopes: the scopes the client will ask for (some servers grant no others later).
    package static func request(endpoint: String, redirectURI: String, clientName: String, scopes: [String]) -> HTTPRequest {
        var metadata: [String: JSONValue] = [
            "application_type": .string("native"),
            "client_name": .string(clientName),
            "redirect_uris": .array([.string(redirectURI)]),
            "grant_types": .array([.string("authorization_code"), .string("refresh_token")]),
            "response_types": .array([.string("code")]),
            "token_endpoint_auth_method": .string("none"),
        ]
        if !scopes.isEmpty { metadata["scope"] = .string(scopes.joined(separator: " ")) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(JSONValue.object(metadata))).map(Array.init) ?? []
        return HTTPRequest(
            method: "POST", url: endpoint, headers: [("Content-Type", "application/json"), ("Accept", "application/json")], body: body)
    }

    /// Reads the registration answer (RFC 7591 §3.2).
    ///
    /// - Throws: `OAuthError.invalidServerResponse` for a server failure (5xx) or a body that is not
    ///   JSON; `OAuthError.configuration` for a refusal (§3.2.2, its error shown) or an answer
    ///   without a `client_id` — both with the advice to register a client by hand.
    package static func decode(
        _ response: HTTPResponse, issuer: String, redirectURI: String, scopes: [String], now: Date
    ) throws(OAuthError) -> RegisteredClient {
        let parsed = JSONValue.parse(response.body)
        if response.status >= 500 || ((200..<300).contains(response.status) && parsed == nil) {
            throw .invalidServerResponse(
                Problem(
                    "the registration endpoint of \(issuer) answered HTTP \(response.status) with \(TokenResponse.describe(response))",
                    remedy: .tryAgainLater))
        }
        guard (200..<300).contains(response.status), let json = parsed else {
            let code = parsed?["error"]?.stringValue.map { TerminalText.escaped($0) } ?? "HTTP \(response.status)"
            let detail = parsed?["error_description"]?.stringValue.map { ": " + TerminalText.escaped($0) } ?? ""
            throw .configuration(Problem("\(issuer) refused to register the client (\(code)\(detail))", remedy: .registerClientAt(issuer: issuer)))
        }
        guard let clientId = json["client_id"]?.stringValue, !clientId.isEmpty else {
            throw .configuration(
                Problem(
                    "the registration endpoint of \(issuer) answered without a client_id (RFC 7591 §3.2.1), so there is no client to sign in with",
                    remedy: .registerClientAt(issuer: issuer)))
        }
        // Whole seconds: they survive the registration file's JSON round trip exactly.
        let registeredAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        var client = RegisteredClient(issuer: issuer, clientId: clientId, redirectURI: redirectURI, scopes: scopes, registeredAt: registeredAt)
        client.clientSecret = json["client_secret"]?.stringValue
        if let expiry = json["client_secret_expires_at"]?.stringValue.flatMap(Double.init), expiry > 0 {
            client.clientSecretExpiresAt = Date(timeIntervalSince1970: expiry)
        }
        if case .string(let granted)? = json["scope"] { client.scopes = granted.split(separator: " ").map(String.init) }
        return client
    }
}

extension RedirectConfiguration {
    /// The loopback redirect `uri` names (`http://127.0.0.1:PORT/path`; port 0 when it names none,
    /// which servers match on any port, RFC 8252 §7.3); `nil` for any other URI.
    public init?(loopbackURI uri: String) {
        guard let location = ProtectedResource.Location(uri), location.scheme == "http", location.query == nil,
            let port = UInt16(exactly: location.port ?? 0)
        else { return nil }
        let host = location.host.contains(":") ? "[\(location.host)]" : location.host
        self.init(host: host, port: port, path: location.path)
        guard (try? validate()) != nil else { return nil }
    }
}

/// A client an authorization server registered for sfauth (RFC 7591), kept per server so that
/// later sign-ins and refreshes use it again — with the redirect URI, port included, it was
/// registered with.
public struct RegisteredClient: Sendable, Equatable, Codable {
    /// The issuer of the server that registered it.
    public var issuer: String
    /// The `client_id` it was given.
    public var clientId: String
    /// The `client_secret`, when the server issued one anyway.
    public var clientSecret: String?
    /// When `clientSecret` expires, when it does (`client_secret_expires_at`).
    public var clientSecretExpiresAt: Date?
    /// The exact redirect URI registered.
    public var redirectURI: String
    /// The scopes registered (what the server may limit later requests to).
    public var scopes: [String]
    /// When it was registered.
    public var registeredAt: Date

    /// A registration from its fields.
    public init(issuer: String, clientId: String, redirectURI: String, scopes: [String], registeredAt: Date) {
        self.issuer = issuer
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.registeredAt = registeredAt
    }

    /// The loopback redirect it was registered with, as the listener's configuration; `nil` when
    /// the registered URI is not a loopback `http` URL with a port.
    public var redirect: RedirectConfiguration? {
        RedirectConfiguration(loopbackURI: redirectURI).flatMap { $0.port == 0 ? nil : $0 }
    }

    /// Whether it can still be used at `now` for `scopes`: its secret (if any) has not expired, and
    /// it was registered for every scope asked for (servers such as the MCP SDK's grant no others).
    public func isUsable(for scopes: [String], at now: Date) -> Bool {
        if let expiry = clientSecretExpiresAt, expiry <= now { return false }
        return Set(scopes).isSubset(of: Set(self.scopes)) || self.scopes.isEmpty
    }
}
