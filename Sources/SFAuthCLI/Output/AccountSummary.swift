import FoundationEssentials
import SFAuth
import SFAuthCore

/// One stored account as `sfauth accounts` shows it — or a file in the store that cannot be read,
/// shown with its path so that one damaged file hides none of the others.
package struct AccountSummary: Sendable, Equatable, Encodable {
    /// Whether the account's tokens can be used.
    package enum State: String, Sendable, Encodable {
        /// The access token is valid.
        case valid
        /// The access token has expired but can be renewed without a person.
        case expiredRefreshable = "expired-refreshable"
        /// The tokens work without a person for now, but the refresh token expires within 7 days
        /// (or has, while the access token still works): a new sign-in is due.
        case signInDue = "sign-in-due"
        /// Only a new sign-in helps.
        case loginRequired = "login-required"
        /// The account's file cannot be read (damaged, or written by something else).
        case unreadable
    }

    /// Where an account's refresh token is kept.
    package enum SecretLocation: String, Sendable, Encodable {
        /// In the Secret Service keyring.
        case keyring
        /// In the account's own file (mode 0600).
        case file
    }

    /// The account's key.
    package var identifier: String
    /// What selects the account in `--account`, `use`, `logout`: its alias, else its identifier.
    package var name: String
    /// The alias the user gave it.
    package var alias: String?
    /// The username.
    package var username: String?
    /// Who the account is, for people: the username, or the client for a client-credentials account.
    package var user: String?
    /// Where the account signs in, with port and path where they tell servers apart: Salesforce's
    /// instance host, else the issuer or token endpoint without its scheme.
    package var server: String
    /// Whether it is the default account.
    package var isDefault: Bool
    /// Whether its tokens can be used.
    package var state: State
    /// When the access token expires (stated or assumed); `nil` when it never expires
    /// (`accessTokenNeverExpires`), and for an unreadable file.
    package var expiresAt: Date?
    /// Whether the access token lasts until it is revoked (a GitHub OAuth app's).
    package var neverExpires = false
    /// When the refresh token expires — when a new sign-in will be needed — if its server said.
    package var refreshTokenExpiry: RefreshTokenExpiry?
    /// Where its refresh token lives; `nil` when it has none.
    package var refreshToken: SecretLocation?
    /// The account's file.
    package var file: String
    /// Why the file cannot be read (`state == .unreadable`).
    package var problem: String?
    /// The protected resource the account's tokens are bound to (`sfauth login --resource`).
    package var resource: String?

    enum CodingKeys: String, CodingKey {
        case identifier, name, alias, username, user, server
        case isDefault = "default"
        case state
        case expiresAt = "expires_at"
        case
            expires
        case refreshToken = "refresh_token"
        case refreshTokenExpiresAt = "refresh_token_expires_at"
        case refreshTokenExpires = "refresh_token_expires"
        case file, problem, resource
    }

    /// Every key is always present (absent values are `null`), so scripts can rely on the shape.
    /// `expires_at` is Unix seconds; `expires` the same time in RFC 3339; both `null` for a token that
    /// never expires. `refresh_token_expires_at` and `refresh_token_expires` say the same of the
    /// refresh token — when a new sign-in will be needed — and are `null` when its server did not
    /// say, or said it has no fixed expiry.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(name, forKey: .name)
        try container.encode(alias, forKey: .alias)
        try container.encode(username, forKey: .username)
        try container.encode(user, forKey: .user)
        try container.encode(server, forKey: .server)
        try container.encode(isDefault, forKey: .isDefault)
        try container.encode(state, forKey: .state)
        try container.encode(expiresAt?.unixSeconds, forKey: .expiresAt)
        try container.encode(expiresAt?.rfc3339, forKey: .expires)
        try container.encode(refreshToken, forKey: .refreshToken)
        try container.encode(refreshTokenExpiry?.date?.unixSeconds, forKey: .refreshTokenExpiresAt)
        try container.encode(refreshTokenExpiry?.date?.rfc3339, forKey: .refreshTokenExpires)
        try container.encode(file, forKey: .file)
        try container.encode(problem, forKey: .problem)
        try container.encode(resource, forKey: .resource)
    }

    /// Lists every stored account in identifier order, the default one marked. A file that cannot
    /// be read is listed as `unreadable` with the reason, instead of failing the whole list.
    /// Refresh tokens' expiries are judged at `now`.
    package static func list(store: FileCredentialStore, tokenSource: TokenSource, now: Date = Date()) throws(OAuthError) -> [AccountSummary] {
        let defaultIdentifier = try store.defaultIdentifier()
        // Every record read, decoded and summarised on all processors through one opening of the
        // store: with 2,000 accounts, one `load` after another was most of the command's 143 ms.
        return try store.allAccounts { identifier, loaded in
            summary(of: identifier, loaded, isDefault: identifier == defaultIdentifier, store: store, tokenSource: tokenSource, now: now)
        }
    }

    /// One account's line: its state from `tokenSource`, or `unreadable` with the reason.
    private static func summary(
        of identifier: String, _ loaded: Result<OAuthCredentials, OAuthError>, isDefault: Bool,
        store: FileCredentialStore, tokenSource: TokenSource, now: Date
    ) -> AccountSummary {
        let credentials: OAuthCredentials
        switch loaded {
        case .success(let read): credentials = read
        case .failure(let error):
            return AccountSummary(
                identifier: identifier, name: identifier, server: identifier.split(separator: "/").first.map(String.init) ?? "?",
                isDefault: isDefault, state: .unreadable, file: store.path(for: identifier), problem: error.description)
        }
        var summary = AccountSummary(
            identifier: identifier, name: credentials.selectableName, server: displayServer(of: credentials),
            isDefault: isDefault, state: State(of: credentials, judgedBy: tokenSource, now: now), file: store.path(for: identifier))
        summary.alias = credentials.alias
        summary.resource = credentials.resource
        summary.username = credentials.username
        summary.user = credentials.username ?? (credentials.obtainedBy == .clientCredentials ? "client \(credentials.clientId)" : nil)
        summary.neverExpires = credentials.accessTokenNeverExpires
        summary.expiresAt = summary.neverExpires ? nil : credentials.expiry(assumedLifetime: tokenSource.options.assumedLifetime)
        switch credentials.refreshTokenPlace {
        case .none: break
        case .record: summary.refreshToken = .file
        case .secretStore: summary.refreshToken = .keyring
        }
        if summary.refreshToken != nil { summary.refreshTokenExpiry = credentials.refreshTokenExpiry }
        return summary
    }

    init(identifier: String, name: String, server: String, isDefault: Bool, state: State, file: String, problem: String? = nil) {
        self.identifier = identifier
        self.name = name
        self.server = server
        self.isDefault = isDefault
        self.state = state
        self.file = file
        self.problem = problem
    }

    /// When a new sign-in will be needed, for people: the refresh token's expiry (`2026-07-01 09:30
    /// UTC`), `no fixed date` when its server said it has none, `never` for a token that never
    /// expires and has no refresh token to run out; `nil` when that is not known.
    package var signInNeeded: String? {
        switch refreshTokenExpiry {
        case .at(let date, _): return date.minuteInUTC
        case .noFixedExpiry: return "no fixed date"
        case nil: return neverExpires && refreshToken == nil ? "never" : nil
        }
    }

    /// `acme.my.salesforce.com`, `127.0.0.1:8000/o`, `idp.example/realms/dev`: enough to tell two
    /// servers on one host apart.
    package static func displayServer(of credentials: OAuthCredentials) -> String {
        if let instance = credentials.instanceURL, let parts = EndpointURL.parts(of: instance) { return parts.host }
        let url = credentials.server.issuer ?? credentials.server.tokenEndpoint
        // The address without its scheme, split by hand: `firstRange(of:)` was a twentieth of
        // `sfauth accounts` with 2,000 accounts.
        let bytes = Array(url.utf8)
        guard let colon = bytes.indices.first(where: { bytes[$0...].starts(with: "://".utf8) }) else { return url }
        var end = bytes.count
        while end > colon + 3 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        return String(decoding: bytes[(colon + 3)..<end], as: UTF8.self)
    }
}
