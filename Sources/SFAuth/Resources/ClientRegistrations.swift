import FoundationEssentials
import Glibc
import SFAuthCore

/// The clients authorization servers registered for this program (RFC 7591), one per server,
/// kept beside the accounts (`registrations/<issuer, percent-encoded>.json`, mode 0600 in the
/// credentials directory) so that every later sign-in to a resource of that server — and every
/// refresh of its accounts — uses the same client and the same loopback port.
public struct ClientRegistrations: Sendable {
    /// The directory the registrations are kept in.
    public let directory: String

    /// The registrations kept in `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// The registrations beside a file store's accounts: `<store directory>/registrations`.
    public init(store: FileCredentialStore) {
        self.init(directory: store.directory + "/registrations")
    }

    /// The client registered at `issuer`, when one is kept (an unreadable file counts as none: the
    /// server is asked to register again).
    public func registration(at issuer: String) -> RegisteredClient? {
        guard let bytes = try? POSIXFile.read(path(for: issuer)) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let client = try? decoder.decode(RegisteredClient.self, from: Data(bytes)), client.issuer == issuer else { return nil }
        return client
    }

    /// Keeps `client` as the registration at its issuer, replacing any other.
    ///
    /// - Throws: `OAuthError.storage` when the file cannot be written.
    public func keep(_ client: RegisteredClient) throws(OAuthError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let bytes = try? encoder.encode(client) else { throw .storage("the registration at \(client.issuer) cannot be encoded") }
        do {
            try POSIXFile.makePrivateDirectory(directory)
            try POSIXFile.writeAtomically(Array(bytes) + [0x0A], to: path(for: client.issuer), directory: directory)
        } catch {
            throw .storage(Problem("the client registered at \(client.issuer) cannot be kept: \(error)"))
        }
    }

    /// Forgets the registration at `issuer` (the server no longer knows it).
    public func forget(issuer: String) {
        _ = unlink(path(for: issuer))
    }

    /// The file of the registration at `issuer`.
    public func path(for issuer: String) -> String {
        directory + "/" + FormURLEncoding.encode(issuer) + ".json"
    }
}
