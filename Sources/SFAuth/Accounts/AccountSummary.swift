#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SFAuthCore

/// One stored account as `sfauth accounts` shows it.
public struct AccountSummary: Sendable, Equatable, Encodable {
    /// Whether the account's tokens can be used.
    public enum State: String, Sendable, Encodable {
        /// The access token is valid.
        case valid
        /// The access token has expired but a refresh token can renew it.
        case expiredRefreshable = "expired-refreshable"
        /// Only a new browser login helps.
        case loginRequired = "login-required"
    }

    /// The account's key.
    public var identifier: String
    /// The alias the user gave it.
    public var alias: String?
    /// The username.
    public var username: String?
    /// Where API calls go (Salesforce instance URL) or the server's host.
    public var server: String
    /// Whether it is the default account.
    public var isDefault: Bool
    /// Whether its tokens can be used.
    public var state: State
    /// When the access token expires (stated or assumed).
    public var expiresAt: Date

    enum CodingKeys: String, CodingKey {
        case identifier, alias, username, server, isDefault = "default", state, expiresAt = "expires_at"
    }

    /// Every key is always present (absent values are `null`), so scripts can rely on the shape.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(alias, forKey: .alias)
        try container.encode(username, forKey: .username)
        try container.encode(server, forKey: .server)
        try container.encode(isDefault, forKey: .isDefault)
        try container.encode(state, forKey: .state)
        try container.encode(expiresAt, forKey: .expiresAt)
    }

    /// Lists every stored account, default first marked, in identifier order.
    public static func list(store: any CredentialStore, tokenSource: TokenSource) throws(OAuthError) -> [AccountSummary] {
        let defaultIdentifier = try store.defaultIdentifier()
        var summaries = [AccountSummary]()
        for identifier in try store.identifiers() {
            guard let credentials = try store.load(identifier: identifier) else { continue }
            let state: State
            if tokenSource.isUsable(credentials) {
                state = .valid
            } else if tokenSource.canRenew(credentials) {
                state = .expiredRefreshable
            } else {
                state = .loginRequired
            }
            summaries.append(AccountSummary(
                identifier: identifier, alias: credentials.alias, username: credentials.username,
                server: credentials.instanceURL ?? EndpointURL.parts(of: credentials.server.tokenEndpoint)?.host ?? credentials.server.tokenEndpoint,
                isDefault: identifier == defaultIdentifier, state: state,
                expiresAt: credentials.expiry(assumedLifetime: tokenSource.assumedLifetime)))
        }
        return summaries
    }
}
