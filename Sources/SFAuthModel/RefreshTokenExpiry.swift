import FoundationEssentials

/// When an account's refresh token stops working, as its server said — after which only a new
/// sign-in (a person at a browser) gets the account new tokens.
///
/// Servers that say: GitHub Apps (`refresh_token_expires_in`, six months), Keycloak
/// (`refresh_expires_in`: the SSO session's idle time, 30 minutes by default, or `0` for an
/// offline token). Most servers say nothing, and then the account records no expiry at all
/// (`OAuthCredentials.refreshTokenExpiry` is `nil`): unknown is not "never".
public enum RefreshTokenExpiry: Sendable, Equatable {
    /// The refresh token expires at `date`; `lifetime` is the number of seconds the server gave it.
    case at(Date, lifetime: TimeInterval)
    /// The server said the refresh token has no fixed expiry (Keycloak's offline tokens:
    /// `refresh_expires_in` `0`). It still ends when revoked, or after the server's idle limit.
    case noFixedExpiry

    /// How long before the expiry a new sign-in is asked for: 7 days.
    public static let reminderWindow: TimeInterval = 7 * 86_400

    /// The time it expires; `nil` for `noFixedExpiry`.
    public var date: Date? {
        if case .at(let date, _) = self { return date }
        return nil
    }

    /// Whether a new sign-in is due at `now`: the refresh token expires within `reminderWindow`
    /// (or has expired), and was given a longer lifetime than that window.
    ///
    /// A lifetime no longer than the window is an idle timeout that every refresh renews
    /// (Keycloak's 30 minutes), not a deadline that a new sign-in would move: such a token would be
    /// "due" all its life, and signing in again would only start another as short. It counts only
    /// once it has expired (`hasPassed(at:)`).
    public func isDue(at now: Date) -> Bool {
        guard case .at(let date, let lifetime) = self, lifetime > Self.reminderWindow else { return false }
        return date.timeIntervalSince(now) <= Self.reminderWindow
    }

    /// Whether the refresh token has expired at `now`.
    public func hasPassed(at now: Date) -> Bool {
        guard let date else { return false }
        return date <= now
    }
}
