import SFAuthCore

/// The credential store each storage mode stands for.
extension StorageMode {
    /// The credential store for a command.
    ///
    /// - Parameters:
    ///   - directory: the credentials directory.
    ///   - app: whose keyring items the store uses (`SecretServiceStore(app:)`). Default: `.sfauth`.
    ///   - signingIn: `true` for a new sign-in, which decides where its refresh token goes:
    ///     `.keyring` requires an available keyring; `.auto` uses it when `probe` finds it available,
    ///     otherwise the files, with a `notice` for the user. Other commands never probe: an account's
    ///     refresh token stays where it was put, and the keyring is asked only when one is needed.
    ///   - probe: asks whether the keyring can be used. Default: `SecretServiceStore.probe()`.
    public func store(
        directory: String, app: AppIdentity = .sfauth, signingIn: Bool,
        probe: () -> SecretServiceAvailability = { SecretServiceStore.probe() }
    )
        throws(OAuthError) -> (store: FileCredentialStore, notice: String?)
    {
        switch self {
        case .file:
            return (FileCredentialStore(directory: directory), nil)
        case .keyring, .auto:
            guard signingIn else {
                return (
                    FileCredentialStore(
                        directory: directory, secretStore: SecretServiceStore(app: app),
                        placesNewRefreshTokensInSecretStore: false), nil
                )
            }
            switch probe() {
            case .available:
                return (FileCredentialStore(directory: directory, secretStore: SecretServiceStore(app: app)), nil)
            case .unavailable(let reason) where self == .keyring:
                throw .configuration(Problem("the keyring cannot be used (\(reason))", remedy: .useFileStorage))
            case .unavailable(let reason):
                let notice = "No keyring answered (\(reason)), so the refresh token is kept in the 0600 credentials file."
                return (
                    FileCredentialStore(
                        directory: directory, secretStore: SecretServiceStore(app: app),
                        placesNewRefreshTokensInSecretStore: false), notice
                )
            }
        }
    }
}
