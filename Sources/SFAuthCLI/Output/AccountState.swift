import SFAuth

extension AccountSummary.State {
    /// The state of a readable account: its token valid, renewable without a person, or needing a
    /// new sign-in — as `tokenSource` (its leeway, assumed lifetime, client secret) judges.
    package init(of credentials: OAuthCredentials, judgedBy tokenSource: TokenSource) {
        if tokenSource.isUsable(credentials) {
            self = .valid
        } else if tokenSource.canRenew(credentials) {
            self = .expiredRefreshable
        } else {
            self = .loginRequired
        }
    }
}
