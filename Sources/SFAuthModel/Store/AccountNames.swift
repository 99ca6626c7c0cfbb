/// How a person names an account — the one rule behind `--account NAME` everywhere, the store's and
/// the front end's: an exact identifier wins; then the account whose alias it is; otherwise every
/// account whose username or email equals the name.
public enum AccountNames {
    /// The identifiers `name` selects among `accounts` (identifier, and the record when it could be
    /// read — a damaged one matches by its identifier only). One identifier is an answer; none or
    /// several are for the caller to explain.
    public static func identifiers(
        matching name: String,
        in accounts: [(identifier: String, credentials: OAuthCredentials?)]
    ) -> [String] {
        if accounts.contains(where: { $0.identifier == name }) { return [name] }
        let named = accounts.compactMap { account in
            account.credentials.flatMap { names(of: $0).contains(name) ? (account.identifier, $0) : nil }
        }
        return preferringAliases(name, named).map(\.identifier)
    }

    /// Of the accounts that have `name` (as alias, username or email), the ones it selects: those
    /// whose alias it is, when there are any, else all of them. An alias is chosen to name one
    /// account, so it wins over a username or email that happens to be the same word — a kubeconfig
    /// or git configuration written with `--account bob` keeps meaning the account aliased bob when
    /// someone named bob signs in.
    public static func preferringAliases(_ name: String, _ named: [(identifier: String, credentials: OAuthCredentials)])
        -> [(identifier: String, credentials: OAuthCredentials)]
    {
        let aliased = named.filter { $0.credentials.alias == name }
        return aliased.isEmpty ? named : aliased
    }

    /// The names besides its identifier that select an account: alias, username, email — and the
    /// protected resource it is bound to, as stored (`sfauth login --resource`), so that the front
    /// end finds a resource's account through the store's name index as it finds any other.
    public static func names(of credentials: OAuthCredentials) -> [String] {
        [credentials.alias, credentials.username, credentials.email, credentials.resource].compactMap { $0 }
    }
}
