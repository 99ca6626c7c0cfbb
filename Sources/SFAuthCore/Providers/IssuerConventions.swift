/// GitLab (gitlab.com or a self-managed instance): OpenID Connect at the instance's root, so its
/// issuer is `https://<host>`. Its metadata does not list PKCE methods (int128/kubelogin#282);
/// every code grant gives a refresh token, rotated at each refresh (docs.gitlab.com, "OAuth 2.0
/// identity provider API"); desktop apps register `http://127.0.0.1/` and may use any port
/// (git-credential-manager, docs/gitlab.md).
public enum GitLab {
    /// gitlab.com.
    public static let defaultHost = "gitlab.com"

    /// The issuer of the GitLab at `host`: a host name (`gitlab.example.com`, https) or a URL
    /// (plain http only on this machine, for tests).
    ///
    /// - Throws: `OAuthError.configuration` when `host` is not a host or an http(s) URL.
    public static func issuer(host: String = defaultHost) throws(OAuthError) -> String {
        try ProviderHost.origin(host, name: "GitLab host", examples: "gitlab.com, gitlab.example.com").url
    }
}

/// Okta: every org has an *org* authorization server (issuer `https://ORG.okta.com`) whose access
/// tokens only Okta's own APIs accept, and *custom* authorization servers (`…/oauth2/default`,
/// `…/oauth2/<id>`) for the org's own APIs (developer.okta.com, "Authorization servers").
public enum Okta {
    /// The issuer to sign in at: `given` as it is when it names an authorization server's path, else
    /// the org's `default` custom authorization server. The second value says so, when it chose.
    public static func issuer(given: String) -> (issuer: String, notice: String?) {
        // Anything but a bare org is taken as it is (insecure URLs are refused where every issuer is).
        guard let origin = try? ProviderHost.origin(given, name: "Okta org", examples: "ORG.okta.com").url else { return (given, nil) }
        let chosen = origin + "/oauth2/default"
        return (
            chosen,
            "Okta: signing in at the custom authorization server \(chosen), whose tokens your own APIs can check. "
                + "The org authorization server \(origin) issues tokens that only Okta's own APIs accept; "
                + "to use it, give the issuer with --preset oidc."
        )
    }
}

/// Auth0: the issuer is the tenant's domain with a trailing slash, `https://TENANT.auth0.com/`,
/// exactly so in the metadata and in every ID token (auth0/auth0-cli#568); without an `audience`
/// the access token is opaque, good only for `/userinfo` (Auth0, "Access tokens").
public enum Auth0 {
    /// The issuer of the tenant at `domain` (`TENANT.REGION.auth0.com`, a custom domain, or its URL):
    /// its URL with the one trailing slash Auth0 publishes. Comparison stays exact — this only spells
    /// the domain the way the tenant names itself.
    public static func issuer(domain: String) -> String {
        var issuer = domain.contains("://") ? domain : "https://" + domain
        while issuer.hasSuffix("/") { issuer.removeLast() }
        return issuer + "/"
    }
}

/// Amazon Cognito user pools: the issuer is `https://cognito-idp.REGION.amazonaws.com/POOL_ID`
/// (metadata and keys), while sign-in, tokens, revocation and userinfo live on the pool's domain
/// (`https://DOMAIN.auth.REGION.amazoncognito.com` or a custom domain), which has no metadata of its
/// own (AWS, "User pool endpoints and managed login reference"). Access tokens carry no `aud`.
public enum Cognito {
    /// The endpoints on the user pool domain `domain` (a host name or URL): authorization, token,
    /// revocation, userinfo.
    ///
    /// - Throws: `OAuthError.configuration` when `domain` is not a host or an https URL.
    public static func endpoints(domain: String) throws(OAuthError) -> (authorize: String, token: String, revoke: String, userinfo: String) {
        let base = try ProviderHost.origin(domain, name: "Cognito domain", examples: "DOMAIN.auth.REGION.amazoncognito.com").url
        return (base + "/oauth2/authorize", base + "/oauth2/token", base + "/oauth2/revoke", base + "/oauth2/userInfo")
    }
}
