/// Token requests of the grants that need no browser redirect.
extension TokenRequest {
    /// The client credentials grant (RFC 6749 §4.4.2): the client acts on its own behalf.
    /// Needs a confidential client (`client.clientSecret`).
    package static func clientCredentials(tokenEndpoint: String, client: ClientConfiguration) -> HTTPRequest {
        post(to: tokenEndpoint, client: client, parameters: [("grant_type", "client_credentials")] + client.scopeParameter)
    }

    /// The resource owner password grant (RFC 6749 §4.3.2). RFC 9700 §2.4 says it MUST NOT be used;
    /// it is here for servers and accounts that offer nothing else.
    package static func password(username: String, password: String, tokenEndpoint: String, client: ClientConfiguration) -> HTTPRequest {
        post(
            to: tokenEndpoint, client: client,
            parameters: [("grant_type", "password"), ("username", username), ("password", password)] + client.scopeParameter)
    }

    /// The JWT bearer grant (RFC 7523 §2.1): a signed assertion stands for the user. The client is
    /// named by the assertion's `iss`, so `client_id` is sent only with a client secret (§3.1).
    package static func jwtBearer(assertion: String, tokenEndpoint: String, client: ClientConfiguration) -> HTTPRequest {
        post(
            to: tokenEndpoint, client: client,
            parameters: [("grant_type", JWTBearerAssertion.grantType), ("assertion", assertion)] + client.scopeParameter,
            identifyClient: false)
    }
}
