import SFAuthCore

/// An access token supplied through the environment, for CI and tests (like NationBuilder's test
/// token): when `SFAUTH_ACCESS_TOKEN` is set, `sfauth token` prints it without reading the store.
/// `SFAUTH_INSTANCE_URL` may accompany it.
public enum EnvironmentToken {
    /// The variable holding the token: `SFAUTH_ACCESS_TOKEN`.
    public static let tokenVariable = "SFAUTH_ACCESS_TOKEN"
    /// The variable holding the instance URL: `SFAUTH_INSTANCE_URL`.
    public static let instanceURLVariable = "SFAUTH_INSTANCE_URL"

    /// The token and instance URL from `environment`, or `nil` when the token variable is unset or empty.
    public static func read(from environment: [String: String]) -> (accessToken: String, instanceURL: String?)? {
        guard let token = environment[tokenVariable], !token.isEmpty else { return nil }
        return (token, environment[instanceURLVariable].flatMap { $0.isEmpty ? nil : $0 })
    }
}
