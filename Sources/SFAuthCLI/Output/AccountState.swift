import FoundationEssentials
import SFAuth

extension AccountSummary.State {
    /// The state of a readable account: its token valid, renewable without a person, due for a new
    /// sign-in soon, or needing one now — as `tokenSource` (its leeway, assumed lifetime, client
    /// secret) judges, with the refresh token's expiry (when the server said it) judged at `now`.
    ///
    /// A refresh token past its recorded expiry cannot renew the access token, so an account whose
    /// access token is not usable then needs a new sign-in; while the access token still works, the
    /// account is `signInDue`, like one whose refresh token expires within 7 days
    /// (`RefreshTokenExpiry.isDue(at:)`).
    package init(of credentials: OAuthCredentials, judgedBy tokenSource: TokenSource, now: Date = Date()) {
        let refreshExpiry = credentials.hasRefreshToken ? credentials.refreshTokenExpiry : nil
        let refreshTokenExpired = refreshExpiry?.hasPassed(at: now) == true
        let usable = tokenSource.isUsable(credentials)
        if !usable && (refreshTokenExpired || !tokenSource.canRenew(credentials)) {
            self = .loginRequired
        } else if refreshTokenExpired || refreshExpiry?.isDue(at: now) == true {
            self = .signInDue
        } else {
            self = usable ? .valid : .expiredRefreshable
        }
    }
}
