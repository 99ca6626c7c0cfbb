/// An authorization server's metadata: OpenID Connect Discovery 1.0 §3 and RFC 8414 §2 (same names).
public struct DiscoveryDocument: Sendable, Equatable {
    /// `issuer`: equal to the URL it was fetched for (checked by `decode`) — or, for Microsoft
    /// Entra's `common`, `organizations` and `consumers`, the issuer Entra documents for them.
    public var issuer: String
    /// `authorization_endpoint`.
    public var authorizationEndpoint: String
    /// `token_endpoint`.
    public var tokenEndpoint: String
    /// `revocation_endpoint` (RFC 7009), when advertised.
    public var revocationEndpoint: String?
    /// `userinfo_endpoint` (OpenID Connect), when advertised.
    public var userinfoEndpoint: String?
    /// `jwks_uri`, when advertised.
    public var jwksURI: String?
    /// `device_authorization_endpoint` (RFC 8628), when advertised.
    public var deviceAuthorizationEndpoint: String?
    /// `code_challenge_methods_supported`, when advertised (Salesforce does not list it).
    public var codeChallengeMethods: [String]?
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3). Default: `false`.
    public var issuerInAuthorizationResponse: Bool
    /// `scopes_supported`, when advertised.
    public var scopesSupported: [String]? = nil
    /// `registration_endpoint` (RFC 7591), when advertised.
    public var registrationEndpoint: String? = nil
    /// `client_id_metadata_document_supported`: whether a client may be named by the URL of its
    /// metadata document (OAuth Client ID Metadata Document; MCP 2025-11-25). Default: `false`.
    public var clientIdMetadataDocumentSupported = false
    /// The grant types the server lists (`grant_types_supported`); `nil` when it lists none.
    public var grantTypesSupported: [String]? = nil

    /// Whether the server says it exchanges tokens (RFC 8693: its grant type is listed).
    public var offersTokenExchange: Bool { grantTypesSupported?.contains(TokenExchange.grantType) == true }

    /// Whether the metadata list PKCE's S256 among `code_challenge_methods_supported`. Signing in
    /// to a protected resource requires it (MCP: a client must refuse a server that does not list
    /// it); other sign-ins send S256 regardless, since Entra and Salesforce support it without
    /// saying so.
    public var listsS256: Bool { codeChallengeMethods?.contains("S256") == true }

    /// The scopes to ask for when nobody chose any: `openid` (who signed in) and, where listed,
    /// `offline_access` (a refresh token, OpenID Connect Core §11) — when the server lists `openid`;
    /// none otherwise. Some servers (Google, Glewlwyd) refuse an authorization request without a
    /// scope, and would leave the browser on an error page.
    public var defaultScopes: [String] {
        guard let supported = scopesSupported, supported.contains("openid") else { return [] }
        return ["openid"] + (supported.contains("offline_access") ? ["offline_access"] : [])
    }

    /// Where to look for an issuer's metadata, in order: OpenID Connect's
    /// `<issuer>/.well-known/openid-configuration`, then RFC 8414's
    /// `<scheme>://<host>/.well-known/oauth-authorization-server<issuer path>` (§3.1).
    package static func locations(issuer: String) -> [String] {
        var base = issuer
        while base.hasSuffix("/") { base.removeLast() }
        var locations = [base + "/.well-known/openid-configuration"]
        if let schemeEnd = base.firstRange(of: "://") {
            let afterScheme = base[schemeEnd.upperBound...]
            let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
            locations.append(String(base[..<pathStart]) + "/.well-known/oauth-authorization-server" + base[pathStart...])
        }
        return locations
    }

    /// Where to look for the metadata of an authorization server named by a protected resource, in
    /// the MCP specification's order: RFC 8414's `oauth-authorization-server` first, then OpenID
    /// Connect's — both inserted before the issuer's path, then OpenID Connect's appended to it.
    package static func authorizationServerLocations(issuer: String) -> [String] {
        var base = issuer
        while base.hasSuffix("/") { base.removeLast() }
        guard let schemeEnd = base.firstRange(of: "://") else { return [base + "/.well-known/oauth-authorization-server"] }
        let afterScheme = base[schemeEnd.upperBound...]
        let pathStart = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        let origin = String(base[..<pathStart])
        let path = String(base[pathStart...])
        if path.isEmpty { return [origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"] }
        return [
            origin + "/.well-known/oauth-authorization-server" + path, origin + "/.well-known/openid-configuration" + path,
            base + "/.well-known/openid-configuration",
        ]
    }

    /// Reads a metadata response fetched for `issuer`.
    ///
    /// - Throws: `OAuthError.invalidServerResponse` when the server failed (5xx) or answered with
    ///   something that is not JSON (an HTML error page, a truncated body): retry later.
    ///   `OAuthError.configuration` when it answered with JSON that is not metadata, or another
    ///   4xx, the `issuer` differs from the one asked for (OIDC Discovery §4.3, RFC 8414 §3.3 — a
    ///   server must not speak for another), an endpoint is missing or insecure, or PKCE S256 is not
    ///   among the advertised methods: the configuration must change.
    ///
    /// - Parameter namedByResource: whether a protected resource named the issuer; a mismatch then
    ///   cannot be answered by naming the other issuer (the resource names this one), so the error
    ///   does not suggest it.
    package static func decode(
        _ response: HTTPResponse, issuer: String, location: String, namedByResource: Bool = false
    ) throws(OAuthError) -> DiscoveryDocument {
        let parsed = JSONValue.parse(response.body)
        if response.status >= 500 || (response.status == 200 && parsed == nil) {
            throw .invalidServerResponse(
                Problem(
                    "\(location) answered HTTP \(response.status) with \(TokenResponse.describe(response)) instead of server metadata",
                    remedy: .tryAgainLater))
        }
        guard response.status == 200, let json = parsed, case .object = json else {
            throw .configuration("\(location) did not answer with server metadata (HTTP \(response.status)); check the issuer URL")
        }
        guard let advertised = json["issuer"]?.stringValue else {
            throw .configuration("the metadata at \(location) has no 'issuer'")
        }
        // Entra's multi-tenant paths publish another issuer than their own URL, as documented
        // (`Entra.isDocumentedIssuer`); the ID token's `iss` is then checked against it.
        guard advertised == issuer || Entra.isDocumentedIssuer(advertised, for: issuer) else {
            if namedByResource {
                throw .configuration(
                    "the metadata at \(location) is for the issuer '\(TerminalText.escaped(advertised))', not '\(issuer)', the server the resource names: refused (RFC 8414 §3.3)"
                )
            }
            throw .configuration(
                "the metadata at \(location) is for the issuer '\(advertised)', not '\(issuer)'; use exactly '\(advertised)' if you trust it")
        }
        func endpoint(_ name: String) throws(OAuthError) -> String? {
            guard let value = json[name]?.stringValue else { return nil }
            try EndpointURL.requireSecure(value, name: name)
            return value
        }
        guard let authorization = try endpoint("authorization_endpoint"), let token = try endpoint("token_endpoint") else {
            throw .configuration("the metadata of \(issuer) lacks an authorization_endpoint or token_endpoint")
        }
        var methods: [String]?
        if case .array(let values)? = json["code_challenge_methods_supported"] {
            methods = values.compactMap(\.stringValue)
            if !(methods ?? []).contains("S256") {
                throw .configuration(
                    "\(issuer) does not support PKCE with S256 (code_challenge_methods_supported: \((methods ?? []).joined(separator: ", ")))")
            }
        }
        var document = DiscoveryDocument(
            issuer: advertised, authorizationEndpoint: authorization, tokenEndpoint: token,
            revocationEndpoint: try endpoint("revocation_endpoint"), userinfoEndpoint: try endpoint("userinfo_endpoint"),
            jwksURI: try endpoint("jwks_uri"), deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
            codeChallengeMethods: methods,
            issuerInAuthorizationResponse: json["authorization_response_iss_parameter_supported"] == .bool(true))
        if case .array(let values)? = json["scopes_supported"] {
            document.scopesSupported = values.compactMap { if case .string(let scope) = $0 { scope } else { nil } }
        }
        document.registrationEndpoint = try endpoint("registration_endpoint")
        if case .array(let values)? = json["grant_types_supported"] {
            document.grantTypesSupported = values.compactMap { if case .string(let grant) = $0 { grant } else { nil } }
        }
        document.clientIdMetadataDocumentSupported = json["client_id_metadata_document_supported"] == .bool(true)
        return document
    }

    /// The server these metadata describe.
    public var server: AuthorizationServer {
        var server = AuthorizationServer(
            authorizationEndpoint: authorizationEndpoint, tokenEndpoint: tokenEndpoint,
            revocationEndpoint: revocationEndpoint, userinfoEndpoint: userinfoEndpoint, issuer: issuer,
            jwksURI: jwksURI, deviceAuthorizationEndpoint: deviceAuthorizationEndpoint)
        server.issuerInAuthorizationResponse = issuerInAuthorizationResponse ? true : nil
        return server
    }
}
