import FoundationEssentials

/// When a stored access token can be handed out as it is, without asking the server: the one rule
/// behind `TokenSource`, `sfauth token` and its fast front end.
public struct TokenFreshness: Sendable, Equatable {
    /// The default leeway: tokens are refreshed 60 s before they expire.
    public static let defaultLeeway: TimeInterval = 60
    /// The default lifetime of tokens whose server does not say (Salesforce sends no `expires_in`;
    /// its default session timeout is 2 hours).
    public static let defaultAssumedLifetime: TimeInterval = 7200

    /// Refresh this many seconds before the expiry (at most half the token's lifetime: see
    /// `OAuthCredentials.isExpired(at:leeway:assumedLifetime:)`).
    public var leeway: TimeInterval
    /// How long an access token is assumed to live when the server did not say.
    public var assumedLifetime: TimeInterval

    /// Creates the rule.
    public init(leeway: TimeInterval = defaultLeeway, assumedLifetime: TimeInterval = defaultAssumedLifetime) {
        self.leeway = leeway
        self.assumedLifetime = assumedLifetime
    }

    /// The defaults, with the tool's `<PREFIX>_TOKEN_LEEWAY` and `<PREFIX>_ASSUMED_TOKEN_LIFETIME` applied.
    public init(settings: EnvironmentSettings) throws(OAuthError) {
        self.init(
            leeway: try settings.tokenLeeway() ?? Self.defaultLeeway,
            assumedLifetime: try settings.assumedTokenLifetime() ?? Self.defaultAssumedLifetime)
    }

    /// Whether `credentials` can be used as they are at `now`: the server has not rejected them and
    /// the access token does not expire within the leeway.
    public func isUsable(_ credentials: OAuthCredentials, at now: Date) -> Bool {
        !credentials.needsLogin && !credentials.isExpired(at: now, leeway: leeway, assumedLifetime: assumedLifetime)
    }
}

extension TokenFreshness {
    /// How long before its expiry a token that lives `lifetime` seconds is renewed: the leeway (at
    /// most half the lifetime), or `minimumValidity` when more is asked (`--min-valid`) — unless the
    /// server's tokens never live that long, and then half their lifetime, so that asking the
    /// impossible renews a token once in a while rather than on every call.
    public func renewalMargin(lifetime: TimeInterval, minimumValidity: TimeInterval?) -> TimeInterval {
        let fairLeeway = lifetime > 0 ? min(leeway, lifetime / 2) : leeway
        guard let minimumValidity, minimumValidity > 0 else { return fairLeeway }
        let reachable = lifetime > 0 && minimumValidity >= lifetime ? lifetime / 2 : minimumValidity
        return max(fairLeeway, reachable)
    }

    /// Whether `credentials` can be used as they are at `now` and stay valid `minimumValidity`
    /// seconds (as far as `renewalMargin` can promise it).
    public func isUsable(_ credentials: OAuthCredentials, at now: Date, minimumValidity: TimeInterval?) -> Bool {
        guard minimumValidity != nil else { return isUsable(credentials, at: now) }
        if credentials.needsLogin { return false }
        if credentials.accessTokenNeverExpires { return true }
        return isUsable(
            issuedAt: credentials.issuedAt, expiry: credentials.expiry(assumedLifetime: assumedLifetime), at: now, minimumValidity: minimumValidity)
    }

    /// Whether `token` can be used as it is at `now` and stay valid `minimumValidity` seconds.
    public func isUsable(_ token: TargetedToken, at now: Date, minimumValidity: TimeInterval?) -> Bool {
        isUsable(issuedAt: token.issuedAt, expiry: token.expiry(assumedLifetime: assumedLifetime), at: now, minimumValidity: minimumValidity)
    }

    private func isUsable(issuedAt: Date, expiry: Date, at now: Date, minimumValidity: TimeInterval?) -> Bool {
        let margin = renewalMargin(lifetime: expiry.timeIntervalSince(issuedAt), minimumValidity: minimumValidity)
        return expiry.timeIntervalSince(now) > margin
    }
}
