import SFAuth

/// The settings a profile can hold: the keys of a `[profile.NAME]` table, of a preset file, and of
/// `sfauth config`'s output. Declared in the order `sfauth config` shows them.
package enum ConfigurationKey: String, CaseIterable, Sendable, Hashable {
    /// `preset`: a built-in preset the profile starts from (`salesforce`, `salesforce-sandbox`,
    /// `salesforce-mydomain`, `oidc`).
    case preset
    /// `login_url`: a Salesforce login host (`https://login.salesforce.com`, `https://test.salesforce.com`).
    case loginURL = "login_url"
    /// `instance_url`: a Salesforce My Domain to sign in through, e.g. `https://acme.my.salesforce.com`.
    case instanceURL = "instance_url"
    /// A forge's host, for the presets that serve more than one (`github`: github.com or a GitHub
    /// Enterprise Server, e.g. `ghe.example.com`; `gitlab`: gitlab.com or a self-managed instance).
    case host
    /// `tenant`: the Microsoft Entra tenant of the `entra` preset: `organizations` (its default),
    /// `common`, `consumers`, a tenant id or a verified domain.
    case tenant
    /// `authority`: the Microsoft Entra sign-in host of the `entra` preset, for sovereign clouds
    /// (default `https://login.microsoftonline.com`).
    case authority
    /// `issuer`: an OpenID Connect / OAuth 2.0 issuer whose endpoints are read from its metadata.
    case issuer
    /// `authorize_url`: the `authorization_endpoint` (RFC 6749 §3.1) of a server given by its endpoints.
    case authorizeURL = "authorize_url"
    /// `token_url`: the `token_endpoint` (RFC 6749 §3.2).
    case tokenURL = "token_url"
    /// `revoke_url`: the `revocation_endpoint` (RFC 7009).
    case revokeURL = "revoke_url"
    /// `userinfo_url`: the OpenID Connect `userinfo_endpoint`.
    case userinfoURL = "userinfo_url"
    /// `jwks_url`: the `jwks_uri` with the keys that sign ID tokens.
    case jwksURL = "jwks_url"
    /// `device_authorization_url`: the `device_authorization_endpoint` (RFC 8628 §3.1).
    case deviceAuthorizationURL = "device_authorization_url"
    /// `domain`: an Amazon Cognito user pool's domain (the `cognito` preset), where its sign-in
    /// pages and OAuth endpoints are.
    case domain
    /// `client_id` (RFC 6749 §2.2).
    case clientId = "client_id"
    /// `scopes` (RFC 6749 §3.3): an array, or one space-separated string.
    case scopes
    /// `callback_host`: the redirect URI's host, `127.0.0.1`, `[::1]` or `localhost`.
    case callbackHost = "callback_host"
    /// `callback_port`: the redirect listener's port; 0 picks a free one.
    case callbackPort = "callback_port"
    /// `callback_path`: the redirect URI's path.
    case callbackPath = "callback_path"
    /// `login_hint` (OpenID Connect Core §3.1.2.1): pre-fills the username on the login page.
    case loginHint = "login_hint"
    /// `username`: the user a non-browser grant signs in as (JWT bearer `sub`, password grant).
    case username
    /// `jwt_key_file`: the private key that signs JWT bearer assertions (RFC 7523).
    case jwtKeyFile = "jwt_key_file"
    /// `audience`: the `aud` of JWT bearer assertions; with the `auth0` preset, the API the access
    /// token is for (Auth0's `audience` authorization parameter).
    case audience
    /// The command that opens the browser, as an argument list (`["google-chrome",
    /// "--profile-directory=Work"]`); `%s` in an argument is replaced by the URL, else it is appended.
    case browser

    /// What kind of value a key holds.
    package enum Kind: Sendable {
        /// A non-empty string.
        case text
        /// A port number, 0–65535.
        case port
        /// A list of words (scopes): an array of strings or one space-separated string.
        case words
        /// A command and its arguments: an array of strings, each taken as it is (spaces included).
        case arguments
    }

    /// How a key takes part in choosing the server (see `ConfigurationResolver`).
    package enum Role: Sendable {
        /// Names the server: `login_url`, `instance_url`, `issuer`, `authorize_url`, `token_url`, and
        /// `preset` when the preset has a host of its own. The highest layer that names a server
        /// decides it on its own.
        case choosesServer
        /// An endpoint of the chosen server: taken only from the deciding layer or higher ones.
        case serverEndpoint
        /// Everything else: each key on its own, highest layer first.
        case independent
    }

    /// What kind of value the key holds.
    package var kind: Kind {
        switch self {
        case .callbackPort: return .port
        case .scopes: return .words
        case .browser: return .arguments
        default: return .text
        }
    }

    /// How the key takes part in choosing the server.
    package var role: Role {
        switch self {
        case .preset, .loginURL, .instanceURL, .host, .tenant, .authority, .issuer, .authorizeURL, .tokenURL: return .choosesServer
        case .revokeURL, .userinfoURL, .jwksURL, .deviceAuthorizationURL, .domain: return .serverEndpoint
        default: return .independent
        }
    }

    /// The environment variable that sets the key, when there is one: `SFAUTH_` and this setting's
    /// name. A small set on purpose: what CI jobs and wrappers choose per run. (`SFAUTH_INSTANCE_URL`
    /// is not one of them: it goes with `SFAUTH_ACCESS_TOKEN`, a token supplied directly.)
    package var environmentSetting: String? {
        switch self {
        case .preset: return "PRESET"
        case .loginURL: return "LOGIN_URL"
        case .issuer: return "ISSUER"
        case .clientId: return "CLIENT_ID"
        case .scopes: return "SCOPES"
        case .username: return "USERNAME"
        case .jwtKeyFile: return "JWT_KEY_FILE"
        default: return nil
        }
    }

    /// The full name of the environment variable that sets the key: `SFAUTH_CLIENT_ID`.
    package var environmentVariable: String? {
        environmentSetting.map(AppIdentity.sfauth.variable)
    }

    /// The `sfauth` flag that sets the key, when there is one (used in hints).
    package var commandLineFlag: String? {
        switch self {
        case .preset: return "--preset"
        case .instanceURL: return "--instance-url"
        case .host: return "--host"
        case .tenant: return "--tenant"
        case .authority: return "--authority"
        case .domain: return "--domain"
        case .issuer: return "--issuer"
        case .authorizeURL: return "--authorize-url"
        case .tokenURL: return "--token-url"
        case .revokeURL: return "--revoke-url"
        case .userinfoURL: return "--userinfo-url"
        case .clientId: return "--client-id"
        case .scopes: return "--scope"
        case .callbackHost: return "--callback-host"
        case .callbackPort: return "--port"
        case .callbackPath: return "--callback-path"
        case .loginHint: return "--login-hint"
        case .deviceAuthorizationURL: return "--device-authorization-url"
        case .username: return "--username"
        case .jwtKeyFile: return "--jwt-key-file"
        case .audience: return "--audience"
        default: return nil
        }
    }

    /// Every way to set the key, for hints: `--client-id, SFAUTH_CLIENT_ID or client_id in the profile`.
    package var waysToSet: String {
        let ways = [commandLineFlag, environmentVariable].compactMap { $0 } + ["\(rawValue) in the profile"]
        return ways.count == 1 ? ways[0] : ways.dropLast().joined(separator: ", ") + " or " + ways[ways.count - 1]
    }

    /// The key names, comma-separated, for "known keys" messages.
    package static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
