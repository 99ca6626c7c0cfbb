import FoundationEssentials
import SFAuthCore

extension OAuthCoordinator {
    /// A token for `target` — narrower scopes, another audience, another resource — from a stored
    /// account's sign-in, without a new one: a refresh asking for it (RFC 6749 §6, RFC 8707 §2.2,
    /// Entra's `<resource>/.default`) or a token exchange (RFC 8693) where the server's metadata
    /// offers one. Kept in the account's record and reused while it is usable, like the account's
    /// own token; never wider than asked, and never a token shown to be for something else.
    ///
    /// ```swift
    /// let graph = try await coordinator.accessToken(for: TokenTarget(audience: "https://graph.example"))
    /// ```
    ///
    /// - Parameters:
    ///   - target: what the token is for.
    ///   - account: the stored account (identifier); default: the default account.
    ///   - forceExchange: obtain it by token exchange only.
    ///   - minimumValidity: renew first unless the token stays valid this long (as far as the
    ///     server's token lifetime allows).
    /// - Throws: `OAuthError.tokenRequestRejected` when the server refused the target (its
    ///   `nextStep` names the sign-in that would grant it); `.configuration` when the server offers no
    ///   way to it, or there is no credential store; `.loginRequired` when the account needs a new
    ///   sign-in.
    public func accessToken(
        for target: TokenTarget, account: String? = nil, forceExchange: Bool = false, minimumValidity: TimeInterval? = nil
    ) async throws(OAuthError) -> TargetedToken {
        guard let store else { throw .configuration("per-call tokens are kept with their account: this coordinator has no credential store") }
        let source = TokenSource(store: store, httpClient: httpClient, options: configuration.tokenOptions, clock: clock)
        let discovery = DiscoveryClient(httpClient: httpClient, cacheDirectory: nil, clock: clock)
        return try await source.token(for: target, account: account, forceExchange: forceExchange, minimumValidity: minimumValidity) {
            credentials in
            guard let issuer = credentials.server.issuer else { return false }
            return (try? await discovery.discover(issuer: issuer))?.offersTokenExchange ?? false
        }
        .token
    }
}
