import SFAuthCore

/// Finds an account by what a person types: its identifier, alias, username or email.
public struct AccountResolver: Sendable {
    private let store: any CredentialStore

    /// Resolves names against the accounts in `store`.
    public init(store: any CredentialStore) {
        self.store = store
    }

    /// The identifier of the account bound to the protected resource `resource`
    /// (`OAuthCredentials.resource`): the one whose resource is `resource` (in any spelling of it),
    /// else the one whose resource covers it most narrowly (`ProtectedResource.covers`); `nil` when
    /// no account is bound to it.
    ///
    /// - Throws: `OAuthError.configuration` when several accounts (of different authorization
    ///   servers) are bound to it alike; what the store throws.
    public func identifier(boundTo resource: String) throws(OAuthError) -> String? {
        // The resource as stored is one of its account's names: the store's selection (a file
        // store's name index, which this also brings up to date for the front end) answers the
        // exact spelling by reading one account.
        let selected = try store.identifiers(selectedBy: resource)
        if selected.count == 1, try store.load(identifier: selected[0])?.resource == resource { return selected[0] }
        let bound = try store.identifiers().compactMap { identifier -> (String, String)? in
            guard let account = try? store.load(identifier: identifier), let own = account.resource else { return nil }
            return (identifier, own)
        }
        var matches = bound.filter { ProtectedResource.isSame($0.1, resource) }
        if matches.isEmpty {
            let covering = bound.filter { ProtectedResource.covers(resource, resource: $0.1) }
            let narrowest = covering.map(\.1.count).max()
            matches = covering.filter { $0.1.count == narrowest }
        }
        guard matches.count <= 1 else {
            throw .configuration(
                "several accounts are bound to \(TerminalText.escaped(resource)) (\(matches.map(\.0).joined(separator: ", "))); name one with its identifier"
            )
        }
        return matches.first?.0
    }

    /// The identifier of the account `name` refers to. An exact identifier wins; otherwise the one
    /// account whose alias, username or email equals `name`.
    ///
    /// - Throws: `OAuthError.configuration` when no account matches (a name that does not exist is
    ///   a mistake on the command line, not a sign-in that expired: the message names the accounts
    ///   there are, or the one meant) or when several do.
    public func identifier(for name: String) throws(OAuthError) -> String {
        // The store's selection first: a file store answers from its name index, reading one account.
        let selected = try store.identifiers(selectedBy: name)
        if selected.count == 1 { return selected[0] }
        // None or several: every account is read, for a message that names them (or the one meant).
        let identifiers = try store.identifiers()
        if identifiers.contains(name) { return name }
        // A damaged file matches by its identifier only (above); it must not hide the others.
        let accounts = identifiers.map { ($0, try? store.load(identifier: $0)) }
        let matches = AccountNames.identifiers(matching: name, in: accounts)
        let names = accounts.compactMap { identifier, credentials in
            credentials.map { (identifier: identifier, label: $0.alias ?? $0.username ?? identifier, all: AccountNames.names(of: $0) + [identifier]) }
        }
        switch matches.count {
        case 1: return matches[0]
        case 0:
            let shown = TerminalText.escaped(name)
            if names.isEmpty { throw .configuration("there is no stored account '\(shown)': no account is stored yet") }
            if let meant = names.first(where: { entry in entry.all.contains { Spelling.isNear($0, name) } }) {
                throw .configuration("there is no stored account '\(shown)'; did you mean '\(TerminalText.escaped(meant.label))'?")
            }
            throw .configuration(
                "there is no stored account '\(shown)'; the accounts are: \(names.map { TerminalText.escaped($0.label) }.joined(separator: ", "))")
        default:
            throw .configuration("'\(TerminalText.escaped(name))' matches several accounts (\(matches.joined(separator: ", "))); use the identifier")
        }
    }
}
