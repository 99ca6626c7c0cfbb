/// How a person names an account — the one rule behind `--account NAME` everywhere, the store's and
/// the front end's: an exact identifier wins; otherwise every account whose alias, username or email
/// equals the name.
public enum AccountNames {
    /// The identifiers `name` selects among `accounts` (identifier, and the record when it could be
    /// read — a damaged one matches by its identifier only). One identifier is an answer; none or
    /// several are for the caller to explain.
    public static func identifiers(matching name: String,
                                   in accounts: [(identifier: String, credentials: OAuthCredentials?)]) -> [String] {
        if accounts.contains(where: { $0.identifier == name }) { return [name] }
        return accounts.compactMap { account in
            guard let credentials = account.credentials else { return nil }
            return names(of: credentials).contains(name) ? account.identifier : nil
        }
    }

    /// The names besides its identifier that select an account: alias, username, email.
    public static func names(of credentials: OAuthCredentials) -> [String] {
        [credentials.alias, credentials.username, credentials.email].compactMap { $0 }
    }
}
