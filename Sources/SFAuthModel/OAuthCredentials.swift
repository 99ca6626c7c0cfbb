import FoundationEssentials

/// Everything a signed-in account needs later: tokens, where they came from, and who they belong to.
///
/// Stored as JSON by the credential stores; field names are the wire names of that file format.
public struct OAuthCredentials: Sendable, Equatable, Codable {
    /// The account's key in the store: `<server host>/<user id>` (see `AccountIdentifier`).
    public var identifier: String
    /// The server the tokens are for; refresh and revocation use its endpoints.
    public var server: AuthorizationServer
    /// The `client_id` the tokens were issued to.
    public var clientId: String
    /// The exact `redirect_uri` used at sign-in.
    public var redirectURI: String
    /// The `access_token`.
    public var accessToken: String
    /// The `token_type`, normally `Bearer`.
    public var tokenType: String
    /// The `refresh_token`, when the server issued one.
    public var refreshToken: String?
    /// When the refresh token expires, when the server said (`refresh_token_expires_in`,
    /// `refresh_expires_in`); read it through `refreshTokenExpiry`.
    public var refreshTokenExpiresAt: Date?
    /// The refresh token's lifetime in seconds, as the server stated it; `0`: no fixed expiry. Read
    /// it through `refreshTokenExpiry`.
    public var refreshTokenLifetime: TimeInterval?
    /// When the access token expires, when known (`expires_in`); Salesforce does not say.
    public var expiresAt: Date?
    /// When the tokens were issued (Salesforce's `issued_at`, otherwise the time of the response).
    public var issuedAt: Date
    /// The scopes granted.
    public var scopes: [String]
    /// The `id_token`, when OpenID Connect was used.
    public var idToken: String?
    /// Salesforce `instance_url`: where API calls go.
    public var instanceURL: String?
    /// Salesforce identity URL (`id`).
    public var identityURL: String?
    /// The user's id at the server: Salesforce user id, or the ID token's `sub`.
    public var userId: String?
    /// Salesforce organization id.
    public var organizationId: String?
    /// A name for people: `preferred_username`, email, or the user id.
    public var username: String?
    /// The user's display name, when the server said (userinfo `name`, Salesforce `display_name`).
    public var displayName: String?
    /// The user's email address, when the server said.
    public var email: String?
    /// A short name the user chose for this account (`sfauth login --alias work`).
    public var alias: String?
    /// Whether the server has rejected these credentials (`invalid_grant` on refresh), so only a new
    /// browser login helps. `nil` means usable. The account is kept, not deleted, so the user can see it.
    public var status: AccountStatus?
    /// Where the refresh token lives: `true` in a `SecretStore` (the keyring), `false` in this
    /// record; `nil` for credentials not stored yet, whose store chooses the place.
    public var refreshTokenInSecretStore: Bool?
    /// For an account signed in with a JWT bearer assertion: how to sign the next one when the access
    /// token expires (there is no refresh token).
    public var jwtBearerRenewal: JWTBearerRenewal?
    /// The grant that signed this account in (`nil` in records written before sfauth recorded it:
    /// a browser sign-in).
    public var obtainedBy: AuthType?
    /// The issuer the server named in its authorization response (RFC 9207 `iss`) when sfauth was
    /// not told which issuer to expect (a server given by its endpoints). Recorded at the first
    /// sign-in; every later sign-in to this account must name the same one.
    public var authorizationResponseIssuer: String?
    /// Which client secret a confidential client signed in with (never the secret itself): a
    /// secret given later is sent only to this account's server, and only when it is that one.
    public var clientSecretBinding: ClientSecretBinding?
    /// How the account was signed in, to sign it in again the same way (`nil` in records written
    /// before sfauth kept it: see `signInRecipe`).
    public var recipe: SignInRecipe?
    /// The client secret the account signed in with, kept for its renewals: a confidential client's
    /// refresh must carry it (RFC 6749 §6 with §2.3.1) — Google's Desktop clients and GitHub Apps
    /// among them. Kept where the refresh token is kept: in this record (0600) with it, or in the
    /// keyring with it, and then `nil` here (`CredentialStore.clientSecret(of:)` reads it from
    /// wherever it is). `nil` for a public client, and for client-credentials accounts, whose secret
    /// is the credential itself and comes from outside on each renewal.
    public var clientSecret: String?
    /// How the client sends its secret to this account's server: `nil` for the form body (the
    /// default), `.basic` once the server refused the body and accepted HTTP Basic.
    public var clientAuthentication: ClientAuthentication?
    /// The protected resource the tokens are bound to (RFC 8707 `resource`), for an account signed
    /// in with `sfauth login --resource`: every refresh asks for it again, and its access token is
    /// sent only there (same origin, a path within the resource's). `nil` for any other account.
    public var resource: String?
    /// Per-call tokens for other scopes, audiences or resources, obtained from this sign-in
    /// (`TokenTarget`) and kept until they expire; `nil` when there are none.
    public var targetedTokens: [TargetedToken]?

    /// Whether an access token issued without `expires_in` lasts until it is revoked — GitHub's
    /// OAuth-app tokens do ("OAuth app tokens do not expire"; docs.github.com, "Token expiration
    /// and revocation") — rather than for the assumed lifetime; a `401` from an API is then the
    /// signal that it ended.
    public var tokensWithoutExpiryNeverExpire: Bool { server.flavor == .github }

    /// Whether the access token lasts until it is revoked: issued without `expires_in` by a server
    /// whose tokens then never expire (`tokensWithoutExpiryNeverExpire`). Outputs say so rather than
    /// show `expiry(assumedLifetime:)`'s far-future date.
    public var accessTokenNeverExpires: Bool { expiresAt == nil && tokensWithoutExpiryNeverExpire }

    /// When the refresh token expires, as the server said; `nil` when it did not say (the two
    /// stored members `refreshTokenExpiresAt` and `refreshTokenLifetime`, as one value). A record
    /// with a time but no lifetime (edited by hand) is taken as a long-lived token.
    public var refreshTokenExpiry: RefreshTokenExpiry? {
        get {
            if refreshTokenLifetime == 0 { return .noFixedExpiry }
            return refreshTokenExpiresAt.map { .at($0, lifetime: refreshTokenLifetime ?? .infinity) }
        }
        set {
            switch newValue {
            case .at(let date, let lifetime):
                refreshTokenExpiresAt = date
                refreshTokenLifetime = lifetime.isFinite ? lifetime : nil
            case .noFixedExpiry:
                refreshTokenExpiresAt = nil
                refreshTokenLifetime = 0
            case nil:
                refreshTokenExpiresAt = nil
                refreshTokenLifetime = nil
            }
        }
    }

    /// When the access token should be treated as expired: `expiresAt` when the server said
    /// (`expires_in`), otherwise `issuedAt + assumedLifetime`. Salesforce never says; its sessions
    /// last the org's session timeout (2 hours by default) counted from the last use, so
    /// `issuedAt + timeout` is a lower bound of the real expiry.
    public func expiry(assumedLifetime: TimeInterval) -> Date {
        if accessTokenNeverExpires { return .distantFuture }
        return expiresAt ?? issuedAt.addingTimeInterval(assumedLifetime)
    }

    /// Whether the access token expires within `leeway` seconds of `now` (see `expiry(assumedLifetime:)`).
    ///
    /// The leeway never exceeds half the token's own lifetime: a token that lives 5 s (or 60 s)
    /// with the default 60 s leeway would otherwise count as expired the moment it arrives, and
    /// every use would refresh it — retiring the token the last caller was just handed.
    public func isExpired(at now: Date, leeway: TimeInterval = 60, assumedLifetime: TimeInterval = .infinity) -> Bool {
        let expiry = expiry(assumedLifetime: assumedLifetime)
        let lifetime = expiry.timeIntervalSince(issuedAt)
        let fairLeeway = lifetime > 0 ? min(leeway, lifetime / 2) : leeway
        return expiry.timeIntervalSince(now) <= fairLeeway
    }

    /// Whether there is a refresh token, in this record or in the secret store (without asking it).
    public var hasRefreshToken: Bool { refreshTokenPlace != .none }

    /// Where the refresh token is — so that no reader has to know that a `nil` `refreshToken` in a
    /// stored record may mean "in the keyring". (`CredentialStore.refreshToken(of:)` reads it from there.)
    public var refreshTokenPlace: RefreshTokenPlace {
        if refreshTokenInSecretStore == true { return .secretStore }
        return refreshToken == nil ? .none : .record
    }

    /// Whether a new access token can be had without a person: a refresh token, or a JWT bearer
    /// account's key to sign a new assertion with.
    public var isRenewable: Bool { hasRefreshToken || jwtBearerRenewal != nil }

    /// Whether only a new browser login can help (the server rejected the refresh token).
    public var needsLogin: Bool { status == .loginRequired }

    /// The name a person types to pick this account: its alias, else its identifier.
    public var selectableName: String { alias ?? identifier }

    /// A name for messages: the alias, else the username, else the identifier.
    public var displayLabel: String { alias ?? username ?? identifier }

    /// Credentials with the required fields; the others start empty (`nil`, or no scopes).
    public init(
        identifier: String, server: AuthorizationServer, clientId: String, redirectURI: String,
        accessToken: String, tokenType: String, issuedAt: Date
    ) {
        self.identifier = identifier
        self.server = server
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.issuedAt = issuedAt
        self.scopes = []
    }
}

/// Where an account's refresh token is kept.
public enum RefreshTokenPlace: Sendable, Equatable {
    /// There is none (the grant issued none, e.g. client credentials).
    case none
    /// In the credentials record itself (`refreshToken`; a 0600 file once stored).
    case record
    /// In a `SecretStore` (the keyring); the record holds no copy.
    case secretStore
}

/// Whether stored credentials can still be used.
public enum AccountStatus: String, Sendable, Codable {
    /// The server rejected the refresh token; a new browser login is needed.
    case loginRequired = "login_required"
}
