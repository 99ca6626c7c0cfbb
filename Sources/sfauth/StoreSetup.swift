import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The credential store a command works on, as `SFAUTH_STORAGE` (or login's `--storage`) says.
enum StoreSetup {
    /// The store for commands other than login: accounts keep their refresh tokens where they are.
    static func existingAccounts() throws(OAuthError) -> FileCredentialStore {
        let environment = ProcessInfo.processInfo.environment
        return try StorageMode(environment: environment).store(environment: environment, signingIn: false).store
    }
}
