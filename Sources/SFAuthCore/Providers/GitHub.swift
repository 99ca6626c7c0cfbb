import FoundationEssentials

/// GitHub as an authorization server — github.com, or a GitHub Enterprise Server at its own host.
///
/// What sets it apart from RFC 6749 and OpenID Connect, each handled where it matters
/// (docs.github.com, "Authorizing OAuth apps", "Generating a user access token for a GitHub App",
/// "Troubleshooting OAuth app access token request errors", REST "OAuth authorizations"):
/// - no OpenID Connect: no discovery, no ID token; who signed in is the REST API's `GET /user`
///   (`login`, numeric `id`) — `api.github.com` for github.com, `/api/v3` on an Enterprise Server;
/// - the token endpoint answers errors with HTTP 200 and form encoding unless asked for JSON
///   (`TokenResponse.decode` reads both, for every server);
/// - OAuth-app tokens carry no `expires_in` and never expire
///   (`OAuthCredentials.tokensWithoutExpiryNeverExpire`); GitHub-App user tokens last 8 hours with a
///   rotating refresh token that itself expires (`refresh_token_expires_in`);
/// - the web flow always needs the app's client secret, at the code exchange and at each refresh;
/// - revocation is `DELETE /applications/{client_id}/token` on the REST API, authenticated with
///   the client id and secret (HTTP Basic), the token in a JSON body (`revocationRequest`).
public enum GitHub {
    /// github.com.
    public static let defaultHost = "github.com"

    /// The authorization server of the GitHub at `host`: `github.com` (the default), an Enterprise
    /// Server's host name (`ghe.example.com`, https), or a URL (`https://ghe.example.com`; plain http
    /// only on this machine, for tests).
    ///
    /// - Throws: `OAuthError.configuration` when `host` is not a host or an http(s) URL.
    public static func server(host: String = defaultHost) throws(OAuthError) -> AuthorizationServer {
        let (web, parts) = try ProviderHost.origin(host, name: "GitHub host", examples: "github.com, ghe.example.com")
        let api = parts.host == defaultHost && parts.port == nil ? "https://api.github.com" : web + "/api/v3"
        return AuthorizationServer(
            authorizationEndpoint: web + "/login/oauth/authorize", tokenEndpoint: web + "/login/oauth/access_token",
            revocationEndpoint: api + "/applications", userinfoEndpoint: api + "/user",
            deviceAuthorizationEndpoint: web + "/login/device/code", flavor: .github)
    }

    /// Where a person can revoke sfauth's access by hand: the server's authorized-applications page.
    package static func applicationsPage(of server: AuthorizationServer) -> String {
        let web = String(server.authorizationEndpoint.dropLast("/login/oauth/authorize".count))
        return web + "/settings/applications"
    }

    /// The revocation of `accessToken` (REST "Delete an app token"): `DELETE
    /// <revocation endpoint>/<client id>/token` (the stored endpoint is the API's `/applications`), HTTP Basic with the id and secret, and
    /// `{"access_token": …}` as the body. The answer is `204`, or `404` for a token GitHub no
    /// longer knows.
    package static func revocationRequest(
        accessToken: String, endpoint: String, clientId: String, clientSecret: String
    ) -> HTTPRequest {
        let url = endpoint + "/" + FormURLEncoding.encode(clientId) + "/token"
        let basic = Data("\(clientId):\(clientSecret)".utf8).base64EncodedString()
        // A token is printable ASCII (RFC 6749 A.12): only `"` and `\` need escaping in a JSON string.
        let escaped = accessToken.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
        let body = Array(#"{"access_token":""#.utf8) + Array(escaped.utf8) + Array(#""}"#.utf8)
        return HTTPRequest(
            method: "DELETE", url: url,
            headers: [
                ("Authorization", "Basic \(basic)"), ("Accept", "application/vnd.github+json"), ("Content-Type", "application/json"),
            ],
            body: body)
    }
}
