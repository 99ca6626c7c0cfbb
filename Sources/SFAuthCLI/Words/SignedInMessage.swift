import SFAuth

/// What `sfauth login` says once it has signed someone in: who, where, and the name that selects
/// the account — and what the server did not grant of what was asked.
package enum SignedInMessage {
    /// The lines for `credentials`, signed in asking for `requestedScopes`.
    package static func lines(for credentials: OAuthCredentials, requestedScopes: [String]) -> [String] {
        let at = AccountSummary.displayServer(of: credentials)
        let account = "account \(credentials.selectableName)"
        let withheld = requestedScopes.filter { !credentials.scopes.contains($0) }
        var lines = [String]()
        if let resource = credentials.resource {
            // Keyed by server and resource: whoever signed in, this is the resource's one account.
            let who = credentials.username.map { " as \($0)" } ?? ""
            lines.append(
                "Signed in\(who) to \(resource) at \(at) (\(account)); its token goes only there: `sfauth token --resource \(resource)`.")
        } else if !credentials.isIdentified {
            // Never taken for another account: the next person's sign-in must not replace this one.
            lines.append(
                "Signed in at \(at), but the server did not say who you are, so this is an account of its own (\(account)); "
                    + "to name it, sign in with --alias NAME, or again with `sfauth login --account \(credentials.selectableName) --alias NAME`.")
        } else if credentials.obtainedBy == .clientCredentials {
            lines.append("Signed in as the client \(credentials.clientId) at \(at) (\(account)).")
        } else if let username = credentials.username, username != credentials.userId {
            lines.append("Signed in as \(username) at \(at) (\(account)).")
        } else {
            // Asking for `profile` helps only when it was not asked for already.
            let hint = requestedScopes.contains("profile") ? "" : " — ask for a scope such as `profile` (--scope) to see one"
            lines.append(
                "Signed in as user \(credentials.userId ?? credentials.username ?? "?") at \(at) (\(account)); the server gave no name\(hint).")
        }
        if !withheld.isEmpty {
            let list = withheld.joined(separator: " ")
            lines.append(
                "The server did not grant \(withheld.count == 1 ? "the scope" : "the scopes") \(list): approve \(withheld.count == 1 ? "it" : "them") "
                    + "on the consent page (sign in again with --param prompt=consent to see it), or ask its administrator.")
        }
        return lines
    }
}
