import FoundationEssentials

/// What an ID token must say to be accepted for a sign-in (OIDC Core §3.1.3.7 items 2–3, 9–11) or
/// for a refresh (§12.2): who issued it, for which client, when, and for which login. Pure: the
/// caller supplies the time and, before this, checks the signature.
package struct IDTokenCheck: Sendable, Equatable {
    /// The `iss` the token must carry: the server's issuer. `nil` when it is not known, and then
    /// only its presence is checked.
    package var issuer: String?
    /// The `client_id` that must be among the token's audiences (`aud`) and, when the token names
    /// an authorized party (`azp`), equal to it.
    package var clientId: String
    /// The `nonce` the authorization request sent; the token must carry exactly it. `nil` when none
    /// was sent (a refresh, or a sign-in without `openid`): then the token's nonce is not checked.
    package var nonce: String?
    /// The ID token of the sign-in, for a refresh (§12.2): the new token must have the same issuer,
    /// subject, audiences and authorized party. `nil` for a sign-in.
    package var original: IDTokenClaims?
    /// How far the clocks of this machine and the server may disagree, in seconds. Default: 60.
    package var leeway: TimeInterval

    /// Creates a check.
    package init(issuer: String?, clientId: String, nonce: String?, original: IDTokenClaims? = nil, leeway: TimeInterval = 60) {
        self.issuer = issuer
        self.clientId = clientId
        self.nonce = nonce
        self.original = original
        self.leeway = leeway
    }

    /// Throws the first check `claims` fail, in one line that says which and how.
    ///
    /// - Parameter now: this machine's time; `exp` may be up to `leeway` in the past, `iat` up to
    ///   `leeway` in the future.
    package func validate(_ claims: IDTokenClaims, now: Date) throws(OAuthError) {
        guard let tokenIssuer = claims.issuer, !tokenIssuer.isEmpty else {
            throw .idTokenRejected("the ID token has no 'iss' (issuer) claim")
        }
        if let issuer, issuer.contains(Entra.tenantPlaceholder) {
            // Entra's multi-tenant issuer template: the token names its own tenant, in `iss` and `tid`.
            guard let expected = Entra.issuer(fromTemplate: issuer, tenantId: claims.tenantId), tokenIssuer == expected else {
                throw .idTokenRejected(
                    "the ID token was issued by '\(tokenIssuer)', which is not this server's issuer '\(issuer)' with the token's tenant ('tid')")
            }
        } else if let issuer, tokenIssuer != issuer {
            throw .idTokenRejected("the ID token was issued by '\(tokenIssuer)', not by this server's issuer '\(issuer)'")
        }
        guard !claims.audiences.isEmpty else {
            throw .idTokenRejected("the ID token has no 'aud' (audience) claim")
        }
        guard claims.audiences.contains(clientId) else {
            let noun = claims.audiences.count == 1 ? "audience" : "audiences"
            throw .idTokenRejected("the ID token is for \(noun) \(Self.quoted(claims.audiences)), not this client '\(clientId)'")
        }
        // OIDC Core §3.1.3.7 items 4–5: when the token names the party it was issued to, that is us.
        if let party = claims.authorizedParty, party != clientId {
            throw .idTokenRejected("the ID token was issued to the client '\(party)' ('azp'), not to this client '\(clientId)'")
        }
        guard let expiresAt = claims.expiresAt else {
            throw .idTokenRejected("the ID token has no 'exp' (expiry) claim")
        }
        if expiresAt.addingTimeInterval(leeway) <= now {
            throw .idTokenRejected("the ID token expired at \(Self.format(expiresAt)) (this machine's clock says \(Self.format(now)))")
        }
        guard let issuedAt = claims.issuedAt else {
            throw .idTokenRejected("the ID token has no 'iat' (issued at) claim")
        }
        if issuedAt > now.addingTimeInterval(leeway) {
            throw .idTokenRejected(
                "the ID token was issued in the future, at \(Self.format(issuedAt)) (this machine's clock says \(Self.format(now)))")
        }
        if let nonce {
            guard let tokenNonce = claims.nonce else {
                throw .idTokenRejected("the ID token has no nonce, but this login sent one")
            }
            if tokenNonce != nonce { throw .idTokenRejected("the ID token's nonce does not match this login's") }
        }
        if let original { try Self.requireSameSignIn(claims, as: original) }
    }

    /// §12.2: a refreshed ID token describes the same sign-in as the original one.
    private static func requireSameSignIn(_ claims: IDTokenClaims, as original: IDTokenClaims) throws(OAuthError) {
        if let originalIssuer = original.issuer, claims.issuer != originalIssuer {
            throw .idTokenRejected("the refreshed ID token was issued by '\(claims.issuer ?? "")', not by '\(originalIssuer)' like the sign-in's")
        }
        if claims.subject != original.subject {
            throw .idTokenRejected("the refreshed ID token is for the subject '\(claims.subject)', not '\(original.subject)' who signed in")
        }
        if Set(claims.audiences) != Set(original.audiences) {
            throw .idTokenRejected("the refreshed ID token is for \(quoted(claims.audiences)), not \(quoted(original.audiences)) like the sign-in's")
        }
        if claims.authorizedParty != original.authorizedParty {
            throw .idTokenRejected(
                "the refreshed ID token names the authorized party \(quoted(claims.authorizedParty.map { [$0] } ?? [])), not \(quoted(original.authorizedParty.map { [$0] } ?? [])) like the sign-in's"
            )
        }
    }

    private static func quoted(_ values: [String]) -> String {
        values.isEmpty ? "none" : values.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// `2026-05-04T10:00:00Z`.
    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
