import CredentialProtocols
import Glibc
import SFAuth
import SFAuthStore

/// The registrations file (`DockerRegistrations`) in the credentials directory, reached as the
/// accounts are: through the opened and checked store directory (`StoreDirectory`), written
/// atomically (0600) under its own lock file, so two `setup-docker` runs never lose each other's
/// registry.
package struct DockerRegistryBook: Sendable {
    /// The credentials directory (`SFAUTH_HOME`, else `$XDG_DATA_HOME/sfauth`).
    package let directory: String

    /// The book kept in `directory`.
    package init(directory: String) {
        self.directory = directory
    }

    /// The file's path, for messages.
    package var path: String { directory + "/" + DockerRegistrations.fileName }

    /// What is recorded; empty when nothing is (no store, no file).
    ///
    /// - Throws: `OAuthError.storage` when the directory is not private, or the file cannot be
    ///   read or is not a registrations file.
    package func registrations() throws(OAuthError) -> DockerRegistrations {
        let store: Directory?
        do { store = try StoreDirectory.open(directory) } catch { throw Self.storageError(error) }
        guard let store else { return DockerRegistrations() }
        return try read(in: store)
    }

    /// Changes the registrations with `change` under the lock and writes them back when `change`
    /// says they changed (returns `true`); returns what `change` returned.
    @discardableResult
    package func update(_ change: (inout DockerRegistrations) -> Bool) throws(OAuthError) -> Bool {
        let store: Directory
        do { store = try StoreDirectory.openCreating(directory) } catch { throw Self.storageError(error) }
        let result: Result<Bool, OAuthError>
        do {
            result = try store.withExclusiveLock(DockerRegistrations.lockFileName) { () throws(OAuthError) -> Bool in
                var registrations = try read(in: store)
                guard change(&registrations) else { return false }
                do {
                    try store.writeAtomically(registrations.encoded(), to: DockerRegistrations.fileName)
                } catch {
                    throw OAuthError.storage("\(error)")
                }
                return true
            }
        } catch {
            throw .storage("\(error)")
        }
        return try result.get()
    }

    private func read(in store: Directory) throws(OAuthError) -> DockerRegistrations {
        let bytes: [UInt8]?
        do { bytes = try store.read(DockerRegistrations.fileName) } catch { throw .storage("\(error)") }
        guard let bytes else { return DockerRegistrations() }
        do {
            return try DockerRegistrations(decoding: bytes)
        } catch {
            throw .storage("\(path) is not sfauth's record of Docker registries; move it away and run `sfauth setup-docker` again for each registry")
        }
    }

    private static func storageError(_ failure: StoreFailure) -> OAuthError {
        switch failure {
        case .untrusted: return .storage(Problem("\(failure)", remedy: .useAnotherCredentialsDirectory))
        case .file, .anotherUsersDirectory: return .storage("\(failure)")
        }
    }
}
