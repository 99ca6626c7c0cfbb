/// The environment a child process (the browser, a command run for the user) is started with: the
/// caller's, less the variables that hold secrets. A browser, its extensions and everything it starts
/// in turn have no business with a client secret or an access token. Which variables those are, the
/// program knows (sfauth: `SFAUTH_CLIENT_SECRET`, `SFAUTH_ACCESS_TOKEN`, `SF_ACCESS_TOKEN`; a tool
/// embedding SFAuth: its own, e.g. `EnvironmentSettings.secretVariables`).
public enum ChildEnvironment {
    /// `environment` without the variables named in `secretVariables`.
    public static func without(_ secretVariables: some Sequence<String>, in environment: [String: String]) -> [String: String] {
        let names = Set(secretVariables)
        return environment.filter { !names.contains($0.key) }
    }
}
