import SFAuthCore

/// Finds an account by what a person types: its identifier, alias, username or email.
public struct AccountResolver: Sendable {
    private let store: any CredentialStore

    /// Resolves names against the accounts in `store`.
    public init(store: any CredentialStore) {
        self.store = store
    }

    /// The identifier of the account `name` refers to. An exact identifier wins; otherwise the one
    /// account whose alias, username or email equals `name`.
    ///
    /// - Throws: `OAuthError.loginRequired` when no account matches, `.configuration` when several do.
    public func identifier(for name: String) throws(OAuthError) -> String {
        let identifiers = try store.identifiers()
        if identifiers.contains(name) { return name }
        var matches = [String]()
        for identifier in identifiers {
            guard let credentials = try store.load(identifier: identifier) else { continue }
            if [credentials.alias, credentials.username, credentials.email].contains(name) { matches.append(identifier) }
        }
        switch matches.count {
        case 1: return matches[0]
        case 0: throw .loginRequired("There is no stored account '\(name)'. `sfauth accounts` lists them; `sfauth login` adds one.")
        default: throw .configuration("'\(name)' matches several accounts (\(matches.joined(separator: ", "))); use the identifier")
        }
    }
}
