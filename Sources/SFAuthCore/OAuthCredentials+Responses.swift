import FoundationEssentials

/// Credentials made from, and updated by, token responses.
extension OAuthCredentials {
    /// Builds credentials from a token response to a browser sign-in.
    ///
    /// - Parameter now: the time the response arrived; expiry is counted from it.
    package init(response: TokenResponse, request: AuthorizationRequest, now: Date) {
        self.init(
            response: response, server: request.server, client: request.client, redirectURI: request.redirectURI,
            obtainedBy: .browser, now: now)
    }

    /// Builds credentials from a token response to any grant.
    ///
    /// - Parameters:
    ///   - redirectURI: the redirect URI of a browser sign-in; empty for grants without one.
    ///   - obtainedBy: the grant that produced the response.
    ///   - username: the username the grant named (password, JWT bearer), used when the response
    ///     does not say who signed in.
    ///   - now: the time the response arrived; expiry is counted from it.
    package init(
        response: TokenResponse, server: AuthorizationServer, client: ClientConfiguration, redirectURI: String = "",
        obtainedBy: AuthType, username: String? = nil, now: Date
    ) {
        let salesforce = response.identityURL.flatMap(Salesforce.identity(fromIdentityURL:))
        self.init(
            identifier: "", server: server, clientId: client.clientId, redirectURI: redirectURI,
            accessToken: response.accessToken, tokenType: response.tokenType,
            issuedAt: Self.issuedAt(of: response, now: now))
        self.refreshToken = response.refreshToken
        // Whole seconds (expiry rounded down): they survive the store's JSON round trip exactly.
        self.expiresAt = response.expiresIn.map { wholeSeconds(now.addingTimeInterval($0)) }
        if response.refreshToken != nil { self.refreshTokenExpiry = Self.refreshTokenExpiry(of: response, now: now) }
        self.scopes = response.scopes ?? client.scopes
        self.idToken = response.idToken
        self.instanceURL = response.instanceURL
        self.identityURL = response.identityURL
        self.organizationId = salesforce?.organizationId
        self.obtainedBy = obtainedBy
        self.resource = client.resource
        self.clientSecretBinding = client.clientSecret.map { ClientSecretBinding(secret: $0) }
        // The secret travels with the refresh token, which cannot be used without it.
        if obtainedBy != .clientCredentials, response.refreshToken != nil { self.clientSecret = client.clientSecret }
        // Until the ID token is validated (the coordinator does), its claims only name the account.
        name(after: response.idToken.flatMap(IDTokenClaims.init(unverifiedToken:)), grantUsername: username)
    }

    /// Names the account after who signed in: the user id from Salesforce's identity URL when there
    /// is one, else the ID token's `sub`; the username from `preferred_username`, the email, the
    /// username a grant named, or the user id; the identifier from those (see `AccountIdentifier`).
    package mutating func name(after claims: IDTokenClaims?, grantUsername: String?) {
        let userId = identityURL.flatMap(Salesforce.identity(fromIdentityURL:))?.userId ?? claims?.subject
        self.userId = userId
        identifier = AccountIdentifier.make(
            server: server, userId: userId, username: grantUsername, clientId: clientId,
            obtainedBy: obtainedBy, resource: resource)
        username = claims?.preferredUsername ?? claims?.email ?? grantUsername ?? userId
    }

    /// Whether the server said who signed in (a user id, a username the grant named, or — for the
    /// client credentials grant — the client itself). Credentials that are not identified are never
    /// taken for an account already stored: each such sign-in is an account of its own.
    package var isIdentified: Bool { !AccountIdentifier.isUnidentified(identifier) }

    /// The second half of the RFC 9207 rule for servers given by their endpoints (see
    /// `AuthorizationResponse.checkIssuer(of:)`): once an account's sign-in named an issuer, every
    /// later sign-in to it must name the same one — present, and equal.
    ///
    /// - Parameter previous: the stored credentials these replace.
    package func checkIssuer(matches previous: OAuthCredentials) throws(OAuthError) {
        guard let recorded = previous.authorizationResponseIssuer, authorizationResponseIssuer != recorded else { return }
        let named = authorizationResponseIssuer.map { "names the issuer '\(TerminalText.escaped($0))'" } ?? "names no issuer"
        throw .invalidServerResponse(
            "the authorization response \(named), but this account's earlier sign-ins named '\(TerminalText.escaped(recorded))' (RFC 9207): it may come from another server, so it was refused; if the server really changed, give its issuer explicitly"
        )
    }

    /// These credentials updated by a refresh response (RFC 6749 §6): a response without a
    /// `refresh_token` keeps the old one (§6: the server MAY issue a new one), likewise scope,
    /// ID token and instance URL.
    ///
    /// The refresh token's expiry follows the token it belongs to: a lifetime in the response
    /// replaces it; a new refresh token without one leaves it unknown (the old token's expiry says
    /// nothing of the new one's); the same refresh token, or none, keeps it.
    ///
    /// - Parameter sentRefreshToken: the refresh token the request carried, when this record does
    ///   not hold it (it is in the keyring); `nil`: this record's `refreshToken`.
    package func refreshed(with response: TokenResponse, now: Date, sentRefreshToken: String? = nil) -> OAuthCredentials {
        var updated = self
        updated.accessToken = response.accessToken
        updated.tokenType = response.tokenType
        updated.refreshToken = response.refreshToken ?? refreshToken
        if response.refreshTokenExpiresIn != nil {
            updated.refreshTokenExpiry = Self.refreshTokenExpiry(of: response, now: now)
        } else if let issued = response.refreshToken, issued != (sentRefreshToken ?? refreshToken) {
            updated.refreshTokenExpiry = nil
        }
        updated.expiresAt = response.expiresIn.map { wholeSeconds(now.addingTimeInterval($0)) }
        updated.issuedAt = Self.issuedAt(of: response, now: now)
        updated.scopes = response.scopes ?? scopes
        updated.idToken = response.idToken ?? idToken
        updated.instanceURL = response.instanceURL ?? instanceURL
        updated.status = nil
        return updated
    }

    /// The refresh token's expiry the response states: `refreshTokenExpiresIn` seconds from `now`
    /// (whole seconds), or none fixed for `0`; `nil` when it does not say.
    package static func refreshTokenExpiry(of response: TokenResponse, now: Date) -> RefreshTokenExpiry? {
        guard let seconds = response.refreshTokenExpiresIn else { return nil }
        return seconds == 0 ? .noFixedExpiry : .at(wholeSeconds(now.addingTimeInterval(seconds)), lifetime: seconds)
    }

    /// The time the tokens were issued: the server's `issued_at` when it is within a day of `now`
    /// (a server's clock may be off by minutes, not by days), else `now`; whole seconds.
    private static func issuedAt(of response: TokenResponse, now: Date) -> Date {
        guard let stated = response.issuedAt, abs(stated.timeIntervalSince(now)) <= 86_400 else { return wholeSeconds(now) }
        return wholeSeconds(stated)
    }

}

private func wholeSeconds(_ date: Date) -> Date {
    Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
}

/// How accounts are keyed: by who they are, so the same account never appears twice — and two
/// people are never taken for one.
package enum AccountIdentifier {
    /// What the user part of an identifier begins with when the server did not say who signed in.
    static let unidentifiedMarker = "unidentified"

    /// `<host[:port]>/client:<client id>` for the client credentials grant (the client is the
    /// account, whatever user the server lets it act as); `<host[:port]>/resource:<resource URL>`
    /// for tokens bound to a protected resource (RFC 8707) — one account per authorization server
    /// and resource, whoever the server says signed in (MCP servers mostly never say), so that
    /// signing in to it again, with more scopes say, renews that account; otherwise
    /// `<host[:port]>/<user id>`; when the server did not say who signed in,
    /// `<host[:port]>/user:<username>` for a grant that named the user, else
    /// `<host[:port]>/unidentified` — a placeholder that `unidentified(server:number:)` turns into an
    /// account of its own when it is stored.
    package static func make(
        server: AuthorizationServer, userId: String?, username: String? = nil, clientId: String,
        obtainedBy: AuthType? = nil, resource: String? = nil
    ) -> String {
        if obtainedBy == .clientCredentials { return "\(host(of: server))/client:\(clientId)" }
        if let resource { return "\(host(of: server))/resource:\(resource)" }
        if let userId { return "\(host(of: server))/\(userId)" }
        if let username { return "\(host(of: server))/user:\(username)" }
        return "\(host(of: server))/\(unidentifiedMarker)"
    }

    /// The identifier of the `number`th sign-in at `server` whose user is unknown:
    /// `<host[:port]>/unidentified-<number>`.
    package static func unidentified(server: AuthorizationServer, number: Int) -> String {
        "\(host(of: server))/\(unidentifiedMarker)-\(number)"
    }

    /// Whether `identifier` names a sign-in whose user the server never named.
    package static func isUnidentified(_ identifier: String) -> Bool {
        guard let slash = identifier.firstIndex(of: "/") else { return false }
        let user = identifier[identifier.index(after: slash)...]
        guard user.hasPrefix(unidentifiedMarker) else { return false }
        let rest = user.dropFirst(unidentifiedMarker.count)
        return rest.isEmpty || (rest.first == "-" && rest.count > 1 && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber })
    }

    /// `host[:port]` of the server's issuer, else of its token endpoint; IPv6 hosts in brackets.
    private static func host(of server: AuthorizationServer) -> String {
        guard let parts = EndpointURL.parts(of: server.issuer ?? server.tokenEndpoint) else { return "unknown-server" }
        let bracketed = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        return bracketed + (parts.port.map { ":\($0)" } ?? "")
    }
}
