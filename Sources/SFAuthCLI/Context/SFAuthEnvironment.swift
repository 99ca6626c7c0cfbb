import SFAuth

/// sfauth's environment variables: the library's `EnvironmentSettings` under the prefix `SFAUTH`
/// (`SFAUTH_HOME`, `SFAUTH_STORAGE`, `SFAUTH_TOKEN_LEEWAY`, `SFAUTH_ASSUMED_TOKEN_LIFETIME`,
/// `SFAUTH_CLIENT_SECRET`, `SFAUTH_HTTP_TIMEOUT`, `SFAUTH_ACCESS_TOKEN`, `SFAUTH_INSTANCE_URL`).
/// The fast front end (`Sources/sfauth`) reads them through the same type.
package enum SFAuthEnvironment {
    /// The prefix of sfauth's variables.
    package static let prefix = "SFAUTH"

    /// The settings in `environment`.
    package static func settings(_ environment: [String: String]) -> EnvironmentSettings {
        EnvironmentSettings(prefix: prefix, environment: environment)
    }

    /// `environment` for a child process (the browser, `sfauth exec`'s command): without the client
    /// secret, a supplied access token, and the token `sfauth token --env` exports.
    package static func forChild(_ environment: [String: String]) -> [String: String] {
        ChildEnvironment.without(settings(environment).secretVariables + ["SF_ACCESS_TOKEN"], in: environment)
    }

    /// `SFAUTH_ACCESS_TOKEN` (with `SFAUTH_INSTANCE_URL`), which wins over anything stored.
    package static func suppliedToken(_ environment: [String: String]) -> SuppliedToken? {
        settings(environment).suppliedToken
    }
}
