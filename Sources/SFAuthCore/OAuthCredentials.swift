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

    /// Builds credentials from a token response to a browser sign-in.
    ///
    /// - Parameter now: the time the response arrived; expiry is counted from it.
    public init(response: TokenResponse, request: AuthorizationRequest, now: Date) {
        let claims = response.idToken.flatMap(IDTokenClaims.init(unverifiedToken:))
        let salesforce = response.identityURL.flatMap(Salesforce.identity(fromIdentityURL:))
        let userId = salesforce?.userId ?? claims?.subject
        self.identifier = AccountIdentifier.make(server: request.server, userId: userId, clientId: request.client.clientId)
        self.server = request.server
        self.clientId = request.client.clientId
        self.redirectURI = request.redirectURI
        self.accessToken = response.accessToken
        self.tokenType = response.tokenType
        self.refreshToken = response.refreshToken
        // Whole seconds (expiry rounded down): they survive the store's JSON round trip exactly.
        self.expiresAt = response.expiresIn.map { wholeSeconds(now.addingTimeInterval($0)) }
        self.issuedAt = wholeSeconds(response.issuedAt ?? now)
        self.scopes = response.scopes ?? request.client.scopes
        self.idToken = response.idToken
        self.instanceURL = response.instanceURL
        self.identityURL = response.identityURL
        self.userId = userId
        self.organizationId = salesforce?.organizationId
        self.username = claims?.preferredUsername ?? claims?.email ?? userId
    }

    /// Whether the access token is known to expire within `leeway` seconds of `now`.
    /// Credentials without a known expiry are not considered expired.
    public func isExpired(at now: Date, leeway: TimeInterval = 60) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) <= leeway
    }
}

private func wholeSeconds(_ date: Date) -> Date {
    Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
}

/// How accounts are keyed: by who they are, so the same account never appears twice.
public enum AccountIdentifier {
    /// `<host[:port]>/<user id>`, or `<host[:port]>/client:<client id>` when the server did not say who
    /// signed in.
    public static func make(server: AuthorizationServer, userId: String?, clientId: String) -> String {
        let endpoint = server.issuer ?? server.tokenEndpoint
        var host = "unknown-server"
        if let parts = EndpointURL.parts(of: endpoint) {
            let bracketed = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
            host = bracketed + (parts.port.map { ":\($0)" } ?? "")
        }
        return "\(host)/\(userId ?? "client:\(clientId)")"
    }
}
