/// The presets of the identity providers people sign in to most — each with its provider's
/// documented behaviour (see `GitHub`, `GitLab`, `Entra`, `Okta`, `Auth0`, `Cognito`) and what a user
/// registers there to use it (`registration`).
extension ProviderPreset {
    /// The redirect of providers that match a registered loopback redirect URI exactly, port
    /// included (Okta, Auth0, Cognito): one fixed port, so that one registration serves every sign-in.
    public static let fixedLoopbackRedirect = RedirectConfiguration(host: "localhost", port: 8400, path: "/callback")

    /// GitHub (github.com, or an Enterprise Server's `host`) through an OAuth app or a GitHub App the
    /// user registers, with its client secret (GitHub's web flow requires it), asking for `repo`
    /// (what git and the repository APIs need), on any free loopback port: GitHub accepts any port
    /// for a registered `http://127.0.0.1/callback` (docs.github.com, "Loopback redirect urls").
    public static let github: ProviderPreset = {
        var preset = ProviderPreset(
            name: "github", summary: "GitHub or GitHub Enterprise Server (give client_id; host for an Enterprise Server)",
            serverLocation: .gitHubHost, clientId: nil, scopes: ["repo"],
            redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"))
        preset.registration = """
            Register an OAuth app at https://github.com/settings/applications/new (on an Enterprise Server, the same page on its host; \
            or a GitHub App at https://github.com/settings/apps/new):
              Authorization callback URL: http://127.0.0.1/callback   (GitHub accepts any port for it)
              Enable Device Flow: tick it to sign in with --device
            Then give --client-id and the app's client secret (--client-secret-file FILE): GitHub's browser sign-in needs it. \
            Scopes asked for: repo.
            """
        return preset
    }()

    /// GitLab (gitlab.com, or a self-managed instance's `host`) through an application the user
    /// registers, not confidential (PKCE instead of a secret), on any free loopback port.
    public static let gitlab: ProviderPreset = {
        var preset = ProviderPreset(
            name: "gitlab", summary: "GitLab.com or a self-managed GitLab (give client_id; host for your own instance)",
            serverLocation: .gitLabHost, clientId: nil, scopes: ["openid", "profile", "email", "read_repository", "write_repository"],
            redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/"))
        preset.registration = """
            Add an application at https://gitlab.com/-/user_settings/applications (on your own instance, the same page on its host):
              Redirect URI: http://127.0.0.1/   (GitLab accepts any port for it)
              Confidential: untick it (sfauth uses PKCE instead of a secret)
              Scopes: openid, profile, email, read_repository, write_repository
            Then give --client-id (and --host for your own instance).
            """
        return preset
    }()

    /// Google, through a Desktop ("installed app") OAuth client the user creates in the Google Cloud
    /// console, with its client secret — which Google requires at the code exchange and at every
    /// refresh, and documents as not confidential for installed apps. A refresh token comes only
    /// with `access_type=offline`, and again on a later sign-in only when consent is shown
    /// (`prompt=consent`): both are asked for. Any free loopback port
    /// (developers.google.com/identity/protocols/oauth2/native-app).
    public static let google: ProviderPreset = {
        var preset = ProviderPreset(
            name: "google", summary: "Google accounts (give client_id of a Desktop client, and its secret)", serverLocation: .issuer,
            clientId: nil, scopes: ["openid", "email", "profile"], redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"),
            issuer: "https://accounts.google.com",
            authorizationParameters: [
                AuthorizationParameter(name: "access_type", value: "offline"), AuthorizationParameter(name: "prompt", value: "consent"),
            ])
        preset.registration = """
            Create an OAuth client at https://console.cloud.google.com/apis/credentials (Create credentials, OAuth client ID):
              Application type: Desktop app   (no redirect URI to register: it accepts http://127.0.0.1 on any port)
            Download its JSON and give it with --client-file FILE, or give --client-id and --client-secret-file FILE: \
            Google requires a Desktop client's secret and documents that it is not confidential. \
            Scopes asked for: openid email profile.
            """
        return preset
    }()

    /// Microsoft Entra ID (work, school and personal Microsoft accounts) through an app registration
    /// that allows public client flows, at the `organizations` tenant unless `--tenant` says
    /// otherwise, redirecting to `http://localhost` on any port — Entra's loopback exception is for
    /// `localhost`, not `127.0.0.1` (learn.microsoft.com, "Redirect URI (reply URL) restrictions").
    public static let entra: ProviderPreset = {
        var preset = ProviderPreset(
            name: "entra", summary: "Microsoft Entra ID (give client_id; tenant, default organizations)", serverLocation: .entraTenant,
            clientId: nil, scopes: ["openid", "profile", "email", "offline_access"],
            redirect: RedirectConfiguration(host: "localhost", port: 0, path: "/"))
        preset.registration = """
            Register an app at https://entra.microsoft.com (Identity, Applications, App registrations, New registration):
              Redirect URI: platform "Public client/native (mobile & desktop)", http://localhost   (Entra accepts any port for it)
              Authentication: "Allow public client flows": Yes
              API permissions: Microsoft Graph openid, profile, email, offline_access (and your API's scopes)
            Then give --client-id and --tenant (your tenant id; or organizations, common, consumers).
            """
        preset.signInNotice =
            "If Microsoft's page says AADSTS50011, the app registration lacks the redirect URI http://localhost "
            + "(platform \"Mobile and desktop applications\"): add it, then sign in again."
        return preset
    }()

    /// Okta, through a native app integration (PKCE), at the org's `default` custom authorization
    /// server unless the issuer names another (`Okta`).
    public static let okta: ProviderPreset = {
        var preset = ProviderPreset(
            name: "okta", summary: "Okta (give issuer https://ORG.okta.com or an authorization server, and client_id)",
            serverLocation: .oktaIssuer, clientId: nil, scopes: ["openid", "profile", "email", "offline_access"], redirect: fixedLoopbackRedirect)
        preset.registration = """
            Create an app integration in the Okta Admin Console (Applications, Create App Integration, OIDC, Native Application):
              Sign-in redirect URI: http://localhost:8400/callback
              Grant types: Authorization Code and Refresh Token   (native apps use PKCE, no secret)
              Assignments: the people who will sign in
            Then give --client-id and --issuer https://YOUR-ORG.okta.com (its default authorization server) or the issuer of another one.
            """
        return preset
    }()

    /// Auth0, through a Native application, with the API's identifier as `audience` (else the access
    /// token is opaque) and `offline_access` for a refresh token.
    public static let auth0: ProviderPreset = {
        var preset = ProviderPreset(
            name: "auth0", summary: "Auth0 (give issuer = the tenant domain, client_id, audience)", serverLocation: .auth0Domain,
            clientId: nil, scopes: ["openid", "profile", "email", "offline_access"], redirect: fixedLoopbackRedirect)
        preset.takesAudience = true
        preset.registration = """
            Create an application in the Auth0 Dashboard (Applications, Create Application, Native):
              Allowed Callback URLs: http://localhost:8400/callback
            For a refresh token, turn on "Allow Offline Access" in your API's settings (Applications, APIs).
            Then give --client-id, --issuer YOUR-TENANT.REGION.auth0.com and --audience YOUR-API-IDENTIFIER.
            """
        return preset
    }()

    /// Keycloak, through a public OpenID Connect client of a realm, asking for an offline token
    /// (`offline_access`: a refresh token that outlives the SSO session), on any free loopback port.
    public static let keycloak: ProviderPreset = {
        var preset = ProviderPreset(
            name: "keycloak", summary: "Keycloak (give issuer https://HOST/realms/REALM and client_id)", serverLocation: .issuer,
            clientId: nil, scopes: ["openid", "offline_access"], redirect: RedirectConfiguration(host: "127.0.0.1", port: 0, path: "/callback"))
        preset.registration = """
            Create a client in the Keycloak admin console (your realm, Clients, Create client, OpenID Connect):
              Client authentication: Off   (a public client; sfauth uses PKCE)
              Standard flow: on   (and OAuth 2.0 Device Authorization Grant for --device)
              Valid redirect URIs: http://127.0.0.1/*
            Then give --client-id and --issuer https://HOST/realms/REALM.
            """
        return preset
    }()

    /// Amazon Cognito, through a public app client of a user pool: the issuer names the pool, the
    /// domain its hosted sign-in pages and OAuth endpoints (`Cognito`).
    public static let cognito: ProviderPreset = {
        var preset = ProviderPreset(
            name: "cognito", summary: "Amazon Cognito user pool (give issuer, domain and client_id)", serverLocation: .cognitoUserPool,
            clientId: nil, scopes: ["openid", "email", "profile"], redirect: fixedLoopbackRedirect)
        preset.registration = """
            Create an app client in the Amazon Cognito console (your user pool, App integration, App clients, Create app client):
              App type: Public client
              Allowed callback URL: http://localhost:8400/callback
              OAuth grant type: Authorization code grant; scopes: openid, email, profile
            Then give --client-id, --issuer https://cognito-idp.REGION.amazonaws.com/POOL_ID and --domain (App integration, Domain).
            """
        return preset
    }()
}
