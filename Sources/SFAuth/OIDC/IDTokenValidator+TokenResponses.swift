import FoundationEssentials
import SFAuthCore

/// The validation policy for token responses, in one place for every grant that signs someone in
/// (browser, device, …) and for refreshes.
extension IDTokenValidator {
    /// Validates the ID token of a token response that signed someone in, then names the account
    /// after its claims (`sub`, `preferred_username`, `email`, `name`) — the validated ones.
    ///
    /// A response without an ID token passes, except for an OpenID Connect authorization code flow
    /// (`codeFlowAskedForOpenID`) with a server that publishes signing keys and granted `openid`:
    /// such a server must send one (OIDC Core §3.1.3.3), and its absence would let the account's
    /// identity rest on nothing the server signed. §3.1.3.3 governs the code flow only: the device
    /// and password grants may come without one (the account is then named by userinfo).
    ///
    /// - Parameters:
    ///   - tokens: the token response.
    ///   - credentials: built from it; its server and client id are what the token must match.
    ///   - nonce: the `nonce` the authorization request sent; `nil` for grants without one.
    ///   - codeFlowAskedForOpenID: whether this is the authorization code flow and `openid` was among
    ///     the requested scopes.
    ///   - now: this machine's time.
    func accept(
        _ tokens: TokenResponse, into credentials: inout OAuthCredentials, nonce: String?,
        codeFlowAskedForOpenID: Bool, now: Date
    ) async throws(OAuthError) {
        guard let idToken = tokens.idToken else {
            if codeFlowAskedForOpenID, credentials.server.jwksURI != nil, credentials.scopes.contains("openid") {
                throw .idTokenRejected("the server granted the 'openid' scope but sent no ID token (OIDC Core §3.1.3.3 requires one)")
            }
            return
        }
        let claims = try await validate(idToken, server: credentials.server, clientId: credentials.clientId, nonce: nonce, now: now)
        // The validated claims name the account now (Salesforce's identity URL still gives its user id).
        credentials.name(after: claims, grantUsername: credentials.username)
        credentials.email = credentials.email ?? claims.email
        credentials.displayName = credentials.displayName ?? claims.name
    }

    /// Validates the ID token of a refresh response (OIDC Core §12.2) against the account's.
    ///
    /// The caller stores the rotated refresh token before calling this (it may fetch keys), and the
    /// new access and ID tokens only after it passed; so a rejection says what was kept.
    func acceptRefreshed(_ idToken: String, of credentials: OAuthCredentials, now: Date) async throws(OAuthError) {
        do {
            _ = try await validateRefreshed(
                idToken, original: credentials.idToken, server: credentials.server,
                clientId: credentials.clientId, now: now)
        } catch .idTokenRejected(let message) {
            throw .idTokenRejected("in the refresh response, \(message) (the rotated refresh token was stored; the new access token was not)")
        }
    }
}
