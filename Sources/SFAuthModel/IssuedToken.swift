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
    /// When it expires, stated by the server or assumed; `nil` when it never expires (a GitHub
    /// OAuth app's: `OAuthCredentials.accessTokenNeverExpires`) or when that is unknown (a supplied
    /// token) — every output then leaves the expiry out rather than name a far-future date.
    package var expiry: Date?
    /// When the account's refresh token expires, when its server said; `nil` otherwise.
    package var refreshTokenExpiry: RefreshTokenExpiry?
    /// The account's identifier; `nil` for a supplied token.
    package var account: String?
    /// The name that selects the account (`OAuthCredentials.selectableName`); `nil` for a supplied token.
    package var accountName: String?
    /// The account's username, when known.
    package var username: String?

    /// A stored account's token; its expiry is the stated one, else `issuedAt + assumedLifetime`,
    /// or none for a token that never expires.
    package init(_ credentials: OAuthCredentials, assumedLifetime: TimeInterval) {
        accessToken = credentials.accessToken
        tokenType = credentials.tokenType
        instanceURL = credentials.instanceURL
        expiry = credentials.accessTokenNeverExpires ? nil : credentials.expiry(assumedLifetime: assumedLifetime)
        refreshTokenExpiry = credentials.hasRefreshToken ? credentials.refreshTokenExpiry : nil
        account = credentials.identifier
        accountName = credentials.selectableName
        username = credentials.username
    }

    /// A per-call token of a stored account (`TokenTarget`): the account's details with the token's
    /// own value and expiry.
    package init(_ token: TargetedToken, of credentials: OAuthCredentials, assumedLifetime: TimeInterval) {
        self.init(credentials, assumedLifetime: assumedLifetime)
        accessToken = token.accessToken
        tokenType = token.tokenType
        expiry = token.expiry(assumedLifetime: assumedLifetime)
    }

    /// A token supplied through the environment: nothing is known about it but its instance URL.
    package init(_ supplied: SuppliedToken) {
        accessToken = supplied.accessToken
        tokenType = "Bearer"
        instanceURL = supplied.instanceURL
    }
}
