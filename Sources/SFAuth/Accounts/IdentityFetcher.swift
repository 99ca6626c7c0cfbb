import SFAuthCore

/// Asks the server who owns an access token: Salesforce's identity URL, or the OpenID Connect
/// userinfo endpoint (OIDC Core §5.3). Used after a login to learn the user's name and email, and
/// by anything that wants to show who an account is.
package struct IdentityFetcher: Sendable {
    private let httpClient: any HTTPClient

    /// Creates a fetcher that sends its requests through `httpClient`. Default: a `CurlHTTPClient`
    /// (which loads libcurl on its first request).
    package init(httpClient: any HTTPClient = CurlHTTPClient()) {
        self.httpClient = httpClient
    }

    /// The identity of the user `credentials.accessToken` belongs to.
    ///
    /// Sends `GET` with `Authorization: Bearer <access token>` (RFC 6750 §2.1) to:
    /// - Salesforce flavor: the identity URL (`credentials.identityURL`, the token response's `id`,
    ///   on the login host — the token is accepted there although API calls go to the instance),
    ///   else the server's userinfo endpoint;
    /// - otherwise: `server.userinfoEndpoint` (OIDC; the token needs the `openid` scope).
    ///
    /// The identity must name the user the credentials belong to (OIDC Core §5.3.2), when both know it.
    ///
    /// - Throws:
    ///   - `.loginRequired` when the server no longer accepts the access token (HTTP 401, or 403 as
    ///     Salesforce answers: `Bad_OAuth_Token`). Refresh the token and try once more before asking
    ///     for a browser login.
    ///   - `.configuration` when there is nowhere to ask (no identity URL, no userinfo endpoint), the
    ///     endpoint is not https (or http to loopback), or the token lacks the scope: `insufficient_scope`,
    ///     or any refusal of a token that was not granted `openid` (OIDC userinfo needs it; DOT answers
    ///     such a token 401 `invalid_token`).
    ///   - `.network` / `.cancelled` when no answer came; `.invalidServerResponse` for anything unusable
    ///     (5xx, HTML, not JSON, another user's identity).
    package func fetch(for credentials: OAuthCredentials) async throws(OAuthError) -> UserIdentity {
        let flavor = credentials.server.flavor
        let endpoint: String? =
            switch flavor {
            case .salesforce: credentials.identityURL ?? credentials.server.userinfoEndpoint
            case .standard, .github: credentials.server.userinfoEndpoint
            }
        guard let endpoint else {
            let server = credentials.server.issuer ?? credentials.server.tokenEndpoint
            throw .configuration(
                "\(server) has no userinfo endpoint\(flavor == .salesforce ? " and the credentials have no identity URL" : ""), so who is signed in cannot be looked up"
            )
        }
        try EndpointURL.requireSecure(endpoint, name: flavor == .salesforce ? "identity URL" : "userinfo endpoint")

        let response = try await httpClient.sendForOAuth(UserIdentity.request(endpoint: endpoint, accessToken: credentials.accessToken))
        let identity: UserIdentity
        do {
            identity = try UserIdentity.decode(response, flavor: flavor)
        } catch .loginRequired(let message) where flavor == .standard && !credentials.scopes.contains("openid") {
            // OIDC userinfo accepts only tokens granted `openid` (OIDC Core §5.3). Servers refuse other
            // tokens with 401 invalid_token (django-oauth-toolkit) rather than 403 insufficient_scope,
            // which would read as an expired token; a new login with the same scopes would not help.
            throw .configuration(
                "the userinfo endpoint \(endpoint) refused the access token, which was not granted the 'openid' scope OpenID Connect userinfo requires (granted: \(credentials.scopes.isEmpty ? "none" : credentials.scopes.joined(separator: " "))); sign in again requesting it. The server said: \(message)"
            )
        }
        try identity.requireUser(credentials.userId, flavor: flavor)
        return identity
    }
}
