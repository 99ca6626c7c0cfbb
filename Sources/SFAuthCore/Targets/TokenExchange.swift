import FoundationEssentials

/// OAuth 2.0 Token Exchange (RFC 8693): the account's access token, traded at the token endpoint
/// for one with another audience, resource or scope.
public enum TokenExchange {
    /// The grant type (§2.1), as servers list it in `grant_types_supported`.
    public static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    /// The token type of an access token (§3), the subject's and the one asked for.
    public static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"

    /// The exchange request (§2.1): `subjectToken`, an access token, for another access token with
    /// `parameters` (`audience`, `resource`, `scope`); the client identifies itself as on a refresh.
    package static func request(subjectToken: String, parameters: [(String, String)], tokenEndpoint: String, client: ClientConfiguration)
        -> HTTPRequest
    {
        TokenRequest.post(
            to: tokenEndpoint, client: client,
            parameters: [
                ("grant_type", grantType),
                ("subject_token", subjectToken),
                ("subject_token_type", accessTokenType),
                ("requested_token_type", accessTokenType),
            ] + parameters)
    }

    /// Refuses an exchange answer that is not an access token (§2.2.1: `issued_token_type` says what
    /// `access_token` holds; a refresh or ID token there is answered with `token_type` `N_A`).
    package static func requireAccessToken(in response: HTTPResponse, endpoint: String) throws(OAuthError) {
        guard (200..<300).contains(response.status), let json = JSONValue.parse(response.body) else { return }
        if let issued = json["issued_token_type"]?.stringValue, issued != accessTokenType {
            throw .invalidServerResponse(
                "the token exchange at \(endpoint) issued a token of type '\(TerminalText.escaped(String(issued.prefix(100))))', not an access token")
        }
    }
}

extension TokenRequest {
    /// A refresh grant (RFC 6749 §6) asking for a per-call target with `parameters` (`scope`,
    /// `resource`) instead of the account's own token.
    package static func refresh(refreshToken: String, tokenEndpoint: String, client: ClientConfiguration, parameters: [(String, String)])
        -> HTTPRequest
    {
        post(
            to: tokenEndpoint, client: client,
            parameters: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)] + parameters)
    }
}
