#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// How the account was signed in, to sign it in again the same way (`nil` in records written
    /// before sfauth kept it: see `signInRecipe`).
    public var recipe: SignInRecipe?

    /// Builds credentials from a token response to a browser sign-in.
    ///
    /// - Parameter now: the time the response arrived; expiry is counted from it.
    public init(response: TokenResponse, request: AuthorizationRequest, now: Date) {
        self.init(response: response, server: request.server, client: request.client, redirectURI: request.redirectURI,
                  obtainedBy: .browser, now: now)
    }

    /// Builds credentials from a token response to any grant.
    ///
    /// - Parameters:
    ///   - redirectURI: the redirect URI of a browser sign-in; empty for grants without one.
    ///   - obtainedBy: the grant that produced the response.
    ///   - username: the username the grant named (password, JWT bearer), used when the response
    ///     does not say who signed in.
    ///   - now: the time the response arrived; expiry is counted from it.
    public init(response: TokenResponse, server: AuthorizationServer, client: ClientConfiguration, redirectURI: String = "",
                obtainedBy: AuthType, username: String? = nil, now: Date) {
        let salesforce = response.identityURL.flatMap(Salesforce.identity(fromIdentityURL:))
        self.identifier = ""
        self.server = server
        self.clientId = client.clientId
        self.redirectURI = redirectURI
        self.accessToken = response.accessToken
        self.tokenType = response.tokenType
        self.refreshToken = response.refreshToken
        // Whole seconds (expiry rounded down): they survive the store's JSON round trip exactly.
        self.expiresAt = response.expiresIn.map { wholeSeconds(now.addingTimeInterval($0)) }
        self.issuedAt = Self.issuedAt(of: response, now: now)
        self.scopes = response.scopes ?? client.scopes
        self.idToken = response.idToken
        self.instanceURL = response.instanceURL
        self.identityURL = response.identityURL
        self.organizationId = salesforce?.organizationId
        self.obtainedBy = obtainedBy
        // Until the ID token is validated (the coordinator does), its claims only name the account.
        name(after: response.idToken.flatMap(IDTokenClaims.init(unverifiedToken:)), grantUsername: username)
    }

    /// Names the account after who signed in: the user id from Salesforce's identity URL when there
    /// is one, else the ID token's `sub`; the username from `preferred_username`, the email, the
    /// username a grant named, or the user id; the identifier from those (see `AccountIdentifier`).
    public mutating func name(after claims: IDTokenClaims?, grantUsername: String?) {
        let userId = identityURL.flatMap(Salesforce.identity(fromIdentityURL:))?.userId ?? claims?.subject
        self.userId = userId
        identifier = AccountIdentifier.make(server: server, userId: userId, username: grantUsername, clientId: clientId,
                                            obtainedBy: obtainedBy)
        username = claims?.preferredUsername ?? claims?.email ?? grantUsername ?? userId
    }

    /// Whether the server said who signed in (a user id, a username the grant named, or — for the
    /// client credentials grant — the client itself). Credentials that are not identified are never
    /// taken for an account already stored: each such sign-in is an account of its own.
    public var isIdentified: Bool { !AccountIdentifier.isUnidentified(identifier) }

    /// The second half of the RFC 9207 rule for servers given by their endpoints (see
    /// `AuthorizationResponse.checkIssuer(of:)`): once an account's sign-in named an issuer, every
    /// later sign-in to it must name the same one — present, and equal.
    ///
    /// - Parameter previous: the stored credentials these replace.
    public func checkIssuer(matches previous: OAuthCredentials) throws(OAuthError) {
        guard let recorded = previous.authorizationResponseIssuer, authorizationResponseIssuer != recorded else { return }
        let named = authorizationResponseIssuer.map { "names the issuer '\(TerminalText.escaped($0))'" } ?? "names no issuer"
        throw .invalidServerResponse("the authorization response \(named), but this account's earlier sign-ins named '\(TerminalText.escaped(recorded))' (RFC 9207): it may come from another server, so it was refused; if the server really changed, give its issuer with --issuer")
    }

    /// When the access token should be treated as expired: `expiresAt` when the server said
    /// (`expires_in`), otherwise `issuedAt + assumedLifetime`. Salesforce never says; its sessions
    /// last the org's session timeout (2 hours by default) counted from the last use, so
    /// `issuedAt + timeout` is a lower bound of the real expiry.
    public func expiry(assumedLifetime: TimeInterval) -> Date {
        expiresAt ?? issuedAt.addingTimeInterval(assumedLifetime)
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

    /// The time the tokens were issued: the server's `issued_at` when it is within a day of `now`
    /// (a server's clock may be off by minutes, not by days), else `now`; whole seconds.
    private static func issuedAt(of response: TokenResponse, now: Date) -> Date {
        guard let stated = response.issuedAt, abs(stated.timeIntervalSince(now)) <= 86_400 else { return wholeSeconds(now) }
        return wholeSeconds(stated)
    }

    /// Whether there is a refresh token, in this record or in the secret store (without asking it).
    public var hasRefreshToken: Bool { refreshToken != nil || refreshTokenInSecretStore == true }

    /// Whether a new access token can be had without a person: a refresh token, or a JWT bearer
    /// account's key to sign a new assertion with.
    public var isRenewable: Bool { hasRefreshToken || jwtBearerRenewal != nil }

    /// Whether only a new browser login can help (the server rejected the refresh token).
    public var needsLogin: Bool { status == .loginRequired }

    /// A name for messages: the alias, else the username, else the identifier.
    public var displayLabel: String { alias ?? username ?? identifier }

    /// These credentials updated by a refresh response (RFC 6749 §6): a response without a
    /// `refresh_token` keeps the old one (§6: the server MAY issue a new one), likewise scope,
    /// ID token and instance URL.
    public func refreshed(with response: TokenResponse, now: Date) -> OAuthCredentials {
        var updated = self
        updated.accessToken = response.accessToken
        updated.tokenType = response.tokenType
        updated.refreshToken = response.refreshToken ?? refreshToken
        updated.expiresAt = response.expiresIn.map { wholeSeconds(now.addingTimeInterval($0)) }
        updated.issuedAt = Self.issuedAt(of: response, now: now)
        updated.scopes = response.scopes ?? scopes
        updated.idToken = response.idToken ?? idToken
        updated.instanceURL = response.instanceURL ?? instanceURL
        updated.status = nil
        return updated
    }
}

/// Whether stored credentials can still be used.
public enum AccountStatus: String, Sendable, Codable {
    /// The server rejected the refresh token; a new browser login is needed.
    case loginRequired = "login_required"
}

private func wholeSeconds(_ date: Date) -> Date {
    Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
}

/// How accounts are keyed: by who they are, so the same account never appears twice — and two
/// people are never taken for one.
public enum AccountIdentifier {
    /// What the user part of an identifier begins with when the server did not say who signed in.
    static let unidentifiedMarker = "unidentified"

    /// `<host[:port]>/client:<client id>` for the client credentials grant (the client is the
    /// account, whatever user the server lets it act as); otherwise `<host[:port]>/<user id>`; when
    /// the server did not say who signed in, `<host[:port]>/user:<username>` for a grant that named
    /// the user, else `<host[:port]>/unidentified` — a placeholder that `unidentified(server:number:)`
    /// turns into an account of its own when it is stored.
    public static func make(server: AuthorizationServer, userId: String?, username: String? = nil, clientId: String,
                            obtainedBy: AuthType? = nil) -> String {
        if obtainedBy == .clientCredentials { return "\(host(of: server))/client:\(clientId)" }
        if let userId { return "\(host(of: server))/\(userId)" }
        if let username { return "\(host(of: server))/user:\(username)" }
        return "\(host(of: server))/\(unidentifiedMarker)"
    }

    /// The identifier of the `number`th sign-in at `server` whose user is unknown:
    /// `<host[:port]>/unidentified-<number>`.
    public static func unidentified(server: AuthorizationServer, number: Int) -> String {
        "\(host(of: server))/\(unidentifiedMarker)-\(number)"
    }

    /// Whether `identifier` names a sign-in whose user the server never named.
    public static func isUnidentified(_ identifier: String) -> Bool {
        guard let slash = identifier.lastIndex(of: "/") else { return false }
        let user = identifier[identifier.index(after: slash)...]
        guard user.hasPrefix(unidentifiedMarker) else { return false }
        let rest = user.dropFirst(unidentifiedMarker.count)
        return rest.isEmpty || (rest.first == "-" && rest.count > 1 && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
    }

    /// `host[:port]` of the server's issuer, else of its token endpoint; IPv6 hosts in brackets.
    private static func host(of server: AuthorizationServer) -> String {
        guard let parts = EndpointURL.parts(of: server.issuer ?? server.tokenEndpoint) else { return "unknown-server" }
        let bracketed = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        return bracketed + (parts.port.map { ":\($0)" } ?? "")
    }
}
