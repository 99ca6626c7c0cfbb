import SFAuthCore

/// Where refresh tokens go: `--storage auto|keyring|file`, or `SFAUTH_STORAGE`.
public enum StorageMode: String, Sendable, CaseIterable {
    /// The Secret Service keyring when one answers, else the 0600 files (and the user is told). Default.
    case auto
    /// The keyring, or fail.
    case keyring
    /// The 0600 files only.
    case file

    /// The environment variable that sets the mode: `SFAUTH_STORAGE`.
    public static let variable = "SFAUTH_STORAGE"

    /// The mode `SFAUTH_STORAGE` names, else `.auto`.
    public init(environment: [String: String]) throws(OAuthError) {
        guard let value = environment[Self.variable], !value.isEmpty else {
            self = .auto
            return
        }
        guard let mode = StorageMode(rawValue: value) else {
            throw .configuration("\(Self.variable) must be auto, keyring or file, not '\(value)'")
        }
        self = mode
    }

    /// The credential store for a command.
    ///
    /// - Parameter signingIn: `true` for a new sign-in, which decides where its refresh token goes:
    ///   `.keyring` requires an available keyring; `.auto` uses it when `probe` finds it available,
    ///   otherwise the files, with a `notice` for the user. Other commands never probe: an account's
    ///   refresh token stays where it was put, and the keyring is asked only when one is needed.
    public func store(environment: [String: String], signingIn: Bool,
                      probe: () -> SecretServiceAvailability = { SecretServiceStore.probe() })
        throws(OAuthError) -> (store: FileCredentialStore, notice: String?) {
        switch self {
        case .file:
            return (try FileCredentialStore(environment: environment), nil)
        case .keyring, .auto:
            guard signingIn else {
                return (try FileCredentialStore(environment: environment, secretStore: SecretServiceStore(),
                                                placesNewRefreshTokensInSecretStore: false), nil)
            }
            switch probe() {
            case .available:
                return (try FileCredentialStore(environment: environment, secretStore: SecretServiceStore()), nil)
            case .unavailable(let reason) where self == .keyring:
                throw .configuration("the keyring cannot be used (\(reason)); unlock or start it, or use --storage file")
            case .unavailable(let reason):
                let notice = "No keyring answered (\(reason)), so the refresh token is kept in the 0600 credentials file; "
                    + "`sfauth accounts` shows where each one lives."
                return (try FileCredentialStore(environment: environment, secretStore: SecretServiceStore(),
                                                placesNewRefreshTokensInSecretStore: false), notice)
            }
        }
    }
}
