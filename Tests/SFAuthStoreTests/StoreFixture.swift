import Foundation
import Glibc
import SFAuthModel

@testable import SFAuthStore

/// A private temporary directory for one test, and accounts to put in it.
struct StoreFixture {
    /// The store's path (not created).
    let path: String

    init() {
        let base = FileManager.default.temporaryDirectory.path + "/sfauth-store-tests-" + UUID().uuidString
        mkdir(base, 0o700)
        path = base + "/store"
    }

    /// The parent of the store: a directory the test may do anything in.
    var parent: String { String(path.dropLast("/store".count)) }

    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// An account at idp.example, valid for an hour from `now`.
    static func account(
        _ user: String, alias: String? = nil, email: String? = nil, token: String? = nil,
        expiresIn: TimeInterval = 3600
    ) -> OAuthCredentials {
        let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
        var credentials = OAuthCredentials(
            identifier: "idp.example/\(user)", server: server, clientId: "c", redirectURI: "",
            accessToken: token ?? "token-of-\(user)", tokenType: "Bearer", issuedAt: now)
        credentials.expiresAt = now.addingTimeInterval(expiresIn)
        credentials.username = user
        credentials.alias = alias
        credentials.email = email
        return credentials
    }

    /// The store opened for writing, its accounts written (the first is the default), as the
    /// library writes them (`AccountFiles.write`, which keeps the name index).
    @discardableResult
    func store(_ accounts: [OAuthCredentials]) throws -> AccountFiles {
        let files = try AccountFiles(store: try StoreDirectory.openCreating(path), creatingAccounts: true)
        for account in accounts { try files.write(account) }
        if let first = accounts.first {
            try files.store.writeAtomically(CredentialFile.defaultFileContents(naming: first.identifier), to: CredentialFile.defaultFile)
        }
        return files
    }

    /// The store opened for reading, as an operation does.
    func reopen() throws -> AccountFiles {
        guard let store = try StoreDirectory.open(path) else { throw FileFailure(operation: "no store at", path: path, code: ENOENT) }
        return try AccountFiles(store: store)
    }

    /// Writes `credentials` into `accounts/` by path, behind the store's back (as an older sfauth
    /// or a person would).
    func writeBehindTheStoresBack(_ credentials: OAuthCredentials) throws {
        let file = path + "/accounts/" + CredentialFile.fileName(for: credentials.identifier)
        let temporary = file + ".new"
        try Data(CredentialFile.encode(credentials)).write(to: URL(fileURLWithPath: temporary))
        rename(temporary, file)
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        lstat(path, &info)
        return info.st_mode & 0o777
    }
}
