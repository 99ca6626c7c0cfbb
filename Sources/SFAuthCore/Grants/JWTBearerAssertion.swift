import FoundationEssentials

/// The claims of a JWT bearer assertion (RFC 7523 §3), before signing: who the client is, which user
/// it speaks for, which server may accept it, and for how short a time.
package struct JWTBearerAssertion: Sendable, Equatable {
    /// The `grant_type` value of the JWT bearer grant (RFC 7523 §2.1).
    package static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// How long an assertion is valid by default: 3 minutes, the lifetime Salesforce allows.
    package static let defaultLifetime: Int = 180

    /// `iss`: the client id (RFC 7523 §3 item 1; Salesforce: the connected app's consumer key).
    package var issuer: String
    /// `sub`: the username the token is for (§3 item 2).
    package var subject: String
    /// `aud`: the authorization server (§3 item 3): its issuer or token endpoint URL; Salesforce wants
    /// `https://login.salesforce.com` or `https://test.salesforce.com`.
    package var audience: String
    /// `iat`, seconds since the epoch.
    package var issuedAt: Int
    /// `exp`, seconds since the epoch (§3 item 4).
    package var expiresAt: Int
    /// `jti`: a random id, so the server can refuse a replay (§3 item 7).
    package var jwtID: String

    /// Creates the claims for an assertion issued at `now`, valid for `lifetime` seconds.
    package init<Generator: RandomNumberGenerator>(
        clientId: String, username: String, audience: String, now: Date,
        lifetime: Int = JWTBearerAssertion.defaultLifetime,
        using generator: inout Generator
    ) {
        issuer = clientId
        subject = username
        self.audience = audience
        issuedAt = Int(now.timeIntervalSince1970)
        expiresAt = issuedAt + lifetime
        jwtID = RandomToken.generate(using: &generator)
    }

    /// The audience when none is configured. Salesforce accepts only its two login hosts, also
    /// for My Domain logins (as the `sf` CLI does: sandboxes get `https://test.salesforce.com`,
    /// everything else `https://login.salesforce.com`). Other servers: the issuer when known, else
    /// the token endpoint (RFC 7523 §3 item 3 allows either).
    package static func defaultAudience(for server: AuthorizationServer) -> String {
        if server.flavor == .salesforce {
            let host = EndpointURL.parts(of: server.tokenEndpoint)?.host ?? ""
            let sandbox = host == Salesforce.sandboxLoginHost || host.hasSuffix(".sandbox.my.salesforce.com")
            return "https://" + (sandbox ? Salesforce.sandboxLoginHost : Salesforce.productionLoginHost)
        }
        return server.issuer ?? server.tokenEndpoint
    }
}
