import FoundationEssentials

/// An access token a command hands out, with what is known about it: from a stored account, or
/// supplied through `SFAUTH_ACCESS_TOKEN`. Every output (`token`, `kube-credential`,
/// `git-credential`, `exec`) of both programs — the front end and the main program — renders one
/// of these.
package struct IssuedToken: Sendable, Equatable {
    /// The access token.
    package var accessToken: String
    /// Its type, as the server said (`Bearer`).
    package var tokenType: String
    /// Where API calls go (Salesforce's `instance_url`), when known.
    package var instanceURL: String?
    /// When it expires, stated by the server or assumed; `nil` when unknown (a supplied token).
    package var expiry: Date?
    /// The account's identifier; `nil` for a supplied token.
    package var account: String?
    /// The account's username, when known.
    package var username: String?

    /// A stored account's token; its expiry is the stated one, else `issuedAt + assumedLifetime`.
    package init(_ credentials: OAuthCredentials, assumedLifetime: TimeInterval) {
        accessToken = credentials.accessToken
        tokenType = credentials.tokenType
        instanceURL = credentials.instanceURL
        expiry = credentials.expiry(assumedLifetime: assumedLifetime)
        account = credentials.identifier
        username = credentials.username
    }

    /// A token supplied through the environment: nothing is known about it but its instance URL.
    package init(_ supplied: SuppliedToken) {
        accessToken = supplied.accessToken
        tokenType = "Bearer"
        instanceURL = supplied.instanceURL
    }
}
