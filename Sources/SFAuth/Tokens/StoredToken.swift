#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SFAuthCore

/// Reads the access token a script asks for, without any network I/O.
public enum StoredToken {
    /// The credentials of the default account (or of `identifier`) when their access token is still
    /// valid at `now` (with `leeway` seconds to spare).
    ///
    /// - Throws: `OAuthError.loginRequired` when nothing is stored or the token has expired,
    ///   `OAuthError.storage` when the store cannot be read.
    public static func current(in store: some CredentialStore, identifier: String? = nil, now: Date,
                               leeway: TimeInterval = 30) throws(OAuthError) -> OAuthCredentials {
        let credentials: OAuthCredentials?
        if let identifier {
            credentials = try store.load(identifier: identifier)
        } else {
            credentials = try store.loadDefault()
        }
        guard let credentials else {
            throw .loginRequired("Not signed in: no stored credentials\(identifier.map { " for '\($0)'" } ?? ""). Run `sfauth login` first.")
        }
        if credentials.isExpired(at: now, leeway: leeway) {
            throw .loginRequired("The access token of \(credentials.username ?? credentials.identifier) has expired. Run `sfauth login` again.")
        }
        return credentials
    }
}
