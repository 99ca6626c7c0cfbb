import FoundationEssentials

/// Requests to the token endpoint (RFC 6749 §4.1.3, §6), as exact HTTP values.
package enum TokenRequest {
    /// Exchanges an authorization code (RFC 6749 §4.1.3) with the PKCE verifier (RFC 7636 §4.5),
    /// naming the request's resource again (RFC 8707 §2.2).
    package static func authorizationCode(
        _ response: AuthorizationResponse, for request: AuthorizationRequest, client: ClientConfiguration? = nil
    ) -> HTTPRequest {
        post(
            to: request.server.tokenEndpoint, client: client ?? request.client,
            parameters: [
                ("grant_type", "authorization_code"),
                ("code", response.code),
                ("redirect_uri", request.redirectURI),
                ("code_verifier", request.pkce.verifier),
            ] + request.client.resourceParameter)
    }

    /// Refreshes an access token (RFC 6749 §6); with `client.resource`, for that resource (RFC 8707 §2.2).
    package static func refresh(refreshToken: String, tokenEndpoint: String, client: ClientConfiguration) -> HTTPRequest {
        post(
            to: tokenEndpoint, client: client,
            parameters: [
                ("grant_type", "refresh_token"),
                ("refresh_token", refreshToken),
            ] + client.resourceParameter)
    }

    /// A form POST. A public client identifies itself with `client_id` (§3.2.1); a confidential one
    /// adds `client_secret` in the body (§2.3.1), which every server we target accepts.
    /// `identifyClient: false` leaves out `client_id` when the grant itself names the client and
    /// there is no secret (a JWT bearer assertion's `iss`, RFC 7523 §3.1).
    static func post(
        to endpoint: String, client: ClientConfiguration, parameters: [(String, String)],
        identifyClient: Bool = true
    ) -> HTTPRequest {
        var parameters = parameters
        var headers = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        if let secret = client.clientSecret, client.authentication == .basic {
            // §2.3.1: the id and the secret form-encoded, then joined by ":" and Base64-encoded.
            let credentials = FormURLEncoding.encode(client.clientId) + ":" + FormURLEncoding.encode(secret)
            headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
        } else {
            if identifyClient || client.clientSecret != nil { parameters.append(("client_id", client.clientId)) }
            if let secret = client.clientSecret { parameters.append(("client_secret", secret)) }
        }
        return HTTPRequest(method: "POST", url: endpoint, headers: headers, body: Array(FormURLEncoding.encode(parameters).utf8))
    }
}
