import SFAuthModel

/// The variables `sfauth token --env` exports and `sfauth exec` sets for its command.
package enum TokenVariables {
    /// `SF_ACCESS_TOKEN`: the access token.
    package static let accessToken = "SF_ACCESS_TOKEN"
    /// `SF_INSTANCE_URL`: where API calls go.
    package static let instanceURL = "SF_INSTANCE_URL"
    /// `SF_USERNAME`: the account's username.
    package static let username = "SF_USERNAME"

    /// Each variable with its value for `token`, `nil` for one to unset.
    package static func values(for token: IssuedToken) -> [(name: String, value: String?)] {
        [(accessToken, token.accessToken), (instanceURL, token.instanceURL), (username, token.username)]
    }
}

/// The environment `sfauth exec` starts its command with — the same from the front end and the
/// main program.
package enum CommandEnvironment {
    /// `environment` without the variables that hold secrets — `secretVariables` (sfauth's client
    /// secret and supplied token: `EnvironmentSettings.secretVariables`) and a token another sfauth
    /// exported (`SF_ACCESS_TOKEN`) — then with `token`'s `TokenVariables` set, and those it has no
    /// value for removed, so that no other account's value is left behind.
    package static func forCommand(
        with token: IssuedToken, from environment: [String: String],
        secretVariables: [String]
    ) -> [String: String] {
        let stripped = Set(secretVariables + [TokenVariables.accessToken])
        var result = environment.filter { !stripped.contains($0.key) }
        for (name, value) in TokenVariables.values(for: token) { result[name] = value }
        return result
    }
}
