/// The environment a child process (the browser, a command run for the user) is started with: the
/// caller's, less the secrets sfauth may have been given through it. A browser, its extensions and
/// everything it starts in turn have no business with a client secret or an access token.
public enum ChildEnvironment {
    /// Variables that hold secrets and are never passed on: the client secret, an access token
    /// supplied for scripts, and the token `sfauth token --env` exports.
    public static let secretVariables: Set<String> = ["SFAUTH_CLIENT_SECRET", "SFAUTH_ACCESS_TOKEN", "SF_ACCESS_TOKEN"]

    /// `environment` without `secretVariables`.
    public static func withoutSecrets(_ environment: [String: String]) -> [String: String] {
        environment.filter { !secretVariables.contains($0.key) }
    }
}
