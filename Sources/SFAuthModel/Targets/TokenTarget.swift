import FoundationEssentials

/// What a per-call token is for, when it is not the account's own token: narrower scopes, another
/// audience, another resource (`sfauth token --scope/--audience/--resource`). Obtained from the
/// account's sign-in without a new one — by a refresh (RFC 6749 §6, RFC 8707 §2.2) or a token
/// exchange (RFC 8693) — and kept beside the account's own token, one per target.
public struct TokenTarget: Sendable, Hashable, Codable {
    /// The scopes asked for, in the order given; `nil` for the account's own.
    public var scopes: [String]?
    /// The audience asked for (RFC 8693 `audience`: a logical name of the service).
    public var audience: String?
    /// The resource asked for (RFC 8707 `resource`: an absolute URI).
    public var resource: String?

    /// A target. Empty or repeated scopes are dropped; an empty list is `nil`.
    public init(scopes: [String]? = nil, audience: String? = nil, resource: String? = nil) {
        var seen = Set<String>()
        let cleaned = scopes?.flatMap { $0.split(separator: " ").map(String.init) }.filter { seen.insert($0).inserted }
        self.scopes = cleaned?.isEmpty == false ? cleaned : nil
        self.audience = audience?.isEmpty == false ? audience : nil
        self.resource = resource?.isEmpty == false ? resource : nil
    }

    /// Whether nothing is asked beyond the account's own token.
    public var isEmpty: Bool { scopes == nil && audience == nil && resource == nil }

    /// The one string two equal targets share, whatever the order of their scopes: how a cached
    /// token is found again.
    public var key: String {
        var parts: [(String, String)] = []
        if let scopes { parts.append(("scope", scopes.sorted().joined(separator: " "))) }
        if let audience { parts.append(("audience", audience)) }
        if let resource { parts.append(("resource", resource)) }
        return FormURLEncoding.encode(parts)
    }

    /// The target in words, for messages: `scope 'read', audience 'api'`.
    public var summary: String {
        var parts: [String] = []
        if let scopes { parts.append("scope '\(scopes.joined(separator: " "))'") }
        if let audience { parts.append("audience '\(audience)'") }
        if let resource { parts.append("resource '\(resource)'") }
        return parts.joined(separator: ", ")
    }
}

/// How a per-call token was obtained.
public enum TargetRoute: String, Sendable, Codable, CaseIterable {
    /// A refresh grant asking for the target (RFC 6749 §6 `scope`, RFC 8707 §2.2 `resource`, or
    /// Entra's `<resource>/.default` scope).
    case refresh
    /// A token exchange of the account's access token (RFC 8693).
    case exchange
}

/// An access token for a `TokenTarget`, kept in its account's record until it expires.
public struct TargetedToken: Sendable, Equatable, Codable {
    /// What the token is for.
    public var target: TokenTarget
    /// The access token.
    public var accessToken: String
    /// Its type, as the server said (`Bearer`).
    public var tokenType: String
    /// When it was issued.
    public var issuedAt: Date
    /// When it expires, when the server said.
    public var expiresAt: Date?
    /// The scopes granted, when the server said.
    public var scopes: [String]?
    /// How it was obtained.
    public var obtainedBy: TargetRoute

    /// A targeted token.
    public init(
        target: TokenTarget, accessToken: String, tokenType: String, issuedAt: Date, expiresAt: Date?, scopes: [String]?,
        obtainedBy: TargetRoute
    ) {
        self.target = target
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.obtainedBy = obtainedBy
    }

    /// When the token counts as expired: the stated time, else `issuedAt + assumedLifetime`.
    public func expiry(assumedLifetime: TimeInterval) -> Date {
        expiresAt ?? issuedAt.addingTimeInterval(assumedLifetime)
    }
}
