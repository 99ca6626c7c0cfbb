import SFAuth
import SFAuthCLI
import FoundationEssentials

/// The credential store a command works on, as `SFAUTH_STORAGE` (or login's `--storage`) says.
enum StoreSetup {
    /// The store for commands other than login: accounts keep their refresh tokens where they are.
    /// Builds nothing costly (the keyring is only contacted when a refresh token is needed).
    static func existingAccounts(environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(OAuthError) -> FileCredentialStore {
        let settings = SFAuthEnvironment.settings(environment)
        return try settings.storageMode().store(directory: try directory(settings), signingIn: false).store
    }

    /// The credentials directory: `SFAUTH_HOME`, else `$XDG_DATA_HOME/sfauth`, else
    /// `~/.local/share/sfauth`.
    static func directory(_ settings: EnvironmentSettings) throws(OAuthError) -> String {
        try settings.credentialsDirectory(app: .sfauth)
    }
}
