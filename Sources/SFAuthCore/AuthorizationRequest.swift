/// An authorization request (RFC 6749 §4.1.1) with PKCE (RFC 7636 §4.3), `state`, and a `nonce` when
/// OpenID Connect is requested (OIDC Core §3.1.2.1). Keeps the secrets the rest of the flow needs.
package struct AuthorizationRequest: Sendable, Equatable {
    /// The server the request is for.
    package let server: AuthorizationServer
    /// The client making the request.
    package let client: ClientConfiguration
    /// The exact `redirect_uri`, built from the port the listener bound.
    package let redirectURI: String
    /// The `state`: 256 random bits, compared exactly when the redirect arrives.
    package let state: String
    /// The PKCE pair; the challenge goes in the URL, the verifier in the token request.
    package let pkce: PKCE
    /// The `nonce`, when `openid` is among the scopes.
    package let nonce: String?

    /// Creates a request with explicit random values (tests use this for exact URLs).
    package init(
        server: AuthorizationServer, client: ClientConfiguration, redirectURI: String,
        state: String, pkce: PKCE, nonce: String?
    ) {
        self.server = server
        self.client = client
        self.redirectURI = redirectURI
        self.state = state
        self.pkce = pkce
        self.nonce = nonce
    }

    /// Creates a request with fresh `state`, PKCE verifier and (for OpenID Connect) `nonce`.
    package init<Generator: RandomNumberGenerator>(
        server: AuthorizationServer, client: ClientConfiguration,
        redirectURI: String, using generator: inout Generator
    ) {
        let state = RandomToken.generate(using: &generator)
        let pkce = PKCE.generate(using: &generator)
        let nonce = client.requestsOpenID ? RandomToken.generate(using: &generator) : nil
        self.init(server: server, client: client, redirectURI: redirectURI, state: state, pkce: pkce, nonce: nonce)
    }

    /// The query parameters, in the order they are sent.
    package var parameters: [(String, String)] {
        var parameters = [("response_type", "code"), ("client_id", client.clientId), ("redirect_uri", redirectURI)]
        parameters += client.scopeParameter
        parameters += [("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method)]
        if let nonce { parameters.append(("nonce", nonce)) }
        parameters += client.resourceParameter
        parameters += client.additionalAuthorizationParameters.map { ($0.name, $0.value) }
        return parameters
    }

    /// The URL to open in the browser: the authorization endpoint with the parameters appended
    /// (after `&` when the endpoint already has a query).
    package var url: String {
        let endpoint = server.authorizationEndpoint
        let separator = endpoint.contains("?") ? "&" : "?"
        return endpoint + separator + FormURLEncoding.encode(parameters)
    }
}
