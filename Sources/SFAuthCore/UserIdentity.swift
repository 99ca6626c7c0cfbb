/// Who is signed in, as the server describes the owner of an access token: the OpenID Connect
/// userinfo response (OIDC Core §5.3.2) or Salesforce's identity URL response.
///
/// Every field is optional because servers release claims per scope (`profile`, `email`); `userId`
/// is always present in a decoded identity.
package struct UserIdentity: Sendable, Equatable, Codable {
    /// The user's id at the server: OIDC `sub`; Salesforce `user_id` (18 characters, `005…`).
    package var userId: String?
    /// The sign-in name: OIDC `preferred_username`; Salesforce `username` (an email-like login).
    package var username: String?
    /// A name for people: OIDC `name` (else `given_name family_name`); Salesforce `display_name`.
    package var displayName: String?
    /// The `email` address, when released (OIDC needs the `email` scope).
    package var email: String?
    /// Salesforce `organization_id` (18 characters, `00D…`); `nil` elsewhere.
    package var organizationId: String?

    /// Creates an identity from fields.
    package init(
        userId: String? = nil, username: String? = nil, displayName: String? = nil, email: String? = nil,
        organizationId: String? = nil
    ) {
        self.userId = userId
        self.username = username
        self.displayName = displayName
        self.email = email
        self.organizationId = organizationId
    }

    /// Reads the fields of a userinfo or identity JSON object, leniently: empty strings count as absent,
    /// numbers are read as strings.
    ///
    /// - `.standard`: `sub`, `preferred_username`, `name` (else `given_name` + `family_name`), `email`.
    /// - `.salesforce`: `user_id`, `organization_id`, `username`, `display_name`, `email`, falling back
    ///   to the userinfo names `preferred_username` and `name`, and to the org and user ids in the
    ///   identity URL (`id`, or `sub`, which Salesforce's userinfo sets to the identity URL).
    package init(json: JSONValue, flavor: AuthorizationServer.Flavor) {
        func string(_ key: String) -> String? {
            guard let value = json[key]?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        var name = string("name")
        if name == nil {
            let parts = [string("given_name"), string("family_name")].compactMap { $0 }
            name = parts.isEmpty ? nil : parts.joined(separator: " ")
        }
        switch flavor {
        case .standard:
            self.init(
                userId: string("sub"), username: string("preferred_username"), displayName: name,
                email: string("email"))
        case .github:
            // docs.github.com, REST "Get the authenticated user": `login`, a numeric `id`, no `sub`.
            self.init(userId: string("id"), username: string("login"), displayName: name, email: string("email"))
        case .salesforce:
            let ids = (string("id") ?? string("sub")).flatMap(Salesforce.identity(fromIdentityURL:))
            self.init(
                userId: string("user_id") ?? ids?.userId ?? string("sub"),
                username: string("username") ?? string("preferred_username"),
                displayName: string("display_name") ?? name,
                email: string("email"),
                organizationId: string("organization_id") ?? ids?.organizationId)
        }
    }

    /// A request for the identity of the access token's owner: `GET` with
    /// `Authorization: Bearer <token>` (RFC 6750 §2.1) and `Accept: application/json` (Salesforce's
    /// identity URL answers XML otherwise).
    ///
    /// - Parameters:
    ///   - endpoint: the `userinfo_endpoint` (OIDC Discovery §3), or Salesforce's identity URL (`id`).
    ///   - accessToken: the `access_token`.
    package static func request(endpoint: String, accessToken: String) -> HTTPRequest {
        HTTPRequest(
            method: "GET", url: endpoint,
            headers: [("Authorization", "Bearer \(accessToken)"), ("Accept", "application/json")])
    }

    /// Interprets the userinfo endpoint's or identity URL's HTTP response.
    ///
    /// - 2xx with a JSON object naming the user (`sub` / `user_id`) → the identity.
    /// - Throws:
    ///   - `OAuthError.loginRequired` when the server no longer accepts the access token: HTTP 401
    ///     (RFC 6750 §3.1 `invalid_token`; Salesforce's REST `INVALID_SESSION_ID`) **or HTTP 403**,
    ///     which is how Salesforce's userinfo and identity URL answer an expired or revoked token
    ///     (body `Bad_OAuth_Token`). The message quotes the status and the server's error verbatim.
    ///     A caller holding a refresh token should refresh and try once more before asking for a
    ///     browser login: a Salesforce access token ends silently after the session timeout.
    ///   - `OAuthError.configuration` for `insufficient_scope` (RFC 6750 §3.1, in the
    ///     `WWW-Authenticate` challenge or the body): the token is valid but was not granted the
    ///     scope the endpoint needs (`openid` for OIDC userinfo), so signing in again with the same
    ///     scopes would not help.
    ///   - `OAuthError.invalidServerResponse` for anything else: 5xx, 404, an HTML page, a body that
    ///     is not a JSON object, or an object that names no user.
    package static func decode(_ response: HTTPResponse, flavor: AuthorizationServer.Flavor) throws(OAuthError) -> UserIdentity {
        let source = flavor == .salesforce ? "Salesforce's identity service" : flavor == .github ? "GitHub's user API" : "the userinfo endpoint"
        if (200..<300).contains(response.status) {
            guard let json = JSONValue.parse(response.body), case .object = json else {
                throw .invalidServerResponse(
                    "\(source) answered HTTP \(response.status) with \(TokenResponse.describe(response)) instead of a JSON object")
            }
            let identity = UserIdentity(json: json, flavor: flavor)
            guard identity.userId != nil else {
                let member = flavor == .salesforce ? "user_id" : flavor == .github ? "id" : "sub"
                throw .invalidServerResponse("\(source) answered without naming the user (no \(member))")
            }
            return identity
        }
        let error = bearerError(in: response)
        let detail = error.map { ": \($0.summary)" } ?? ""
        if error?.code == "insufficient_scope" {
            throw .configuration(
                "the access token was not granted the scope \(source) requires (HTTP \(response.status)\(detail)); sign in again requesting it (OpenID Connect userinfo needs the 'openid' scope)"
            )
        }
        if response.status == 401 || response.status == 403 {
            throw .loginRequired(
                "The server no longer accepts the access token (HTTP \(response.status)\(detail)): it has expired or was revoked. Refresh it, or sign in again."
            )
        }
        throw .invalidServerResponse(
            "\(source) answered HTTP \(response.status) with \(TokenResponse.describe(response))\(error.map { " (\($0.summary))" } ?? "")")
    }

    /// Checks that this identity describes the user the tokens belong to (OIDC Core §5.3.2: the
    /// userinfo `sub` must equal the ID token's `sub`, otherwise the response must not be used).
    /// Salesforce ids are compared case-insensitively on their first 15 characters when one of them
    /// is the 15-character form. Passes when either id is unknown.
    ///
    /// - Throws: `OAuthError.invalidServerResponse` when the ids differ.
    package func requireUser(_ expectedUserId: String?, flavor: AuthorizationServer.Flavor) throws(OAuthError) {
        guard let expectedUserId, let userId, userId != expectedUserId else { return }
        if flavor == .salesforce, userId.count == 15 || expectedUserId.count == 15,
            userId.prefix(15).lowercased() == expectedUserId.prefix(15).lowercased()
        {
            return
        }
        throw .invalidServerResponse("the identity returned is user '\(userId)', but the tokens belong to user '\(expectedUserId)'")
    }

    /// The server's reason for refusing a bearer token, from (in order) the `WWW-Authenticate`
    /// challenge (RFC 6750 §3), an RFC 6749 §5.2-style JSON or form body, Salesforce's REST error
    /// array `[{"errorCode","message"}]`, or a short plain-text body such as `Bad_OAuth_Token`.
    static func bearerError(in response: HTTPResponse) -> OAuthServerError? {
        if let header = response.headers["www-authenticate"] {
            let parameters = challengeParameters(header)
            if let code = parameters["error"], !code.isEmpty {
                return OAuthServerError(
                    code: code, description: parameters["error_description"],
                    uri: parameters["error_uri"], httpStatus: response.status)
            }
        }
        let json = JSONValue.parse(response.body)
        if let error = TokenResponse.serverError(in: response, json: json) { return error }
        if case .array(let items)? = json, let first = items.first, let code = first["errorCode"]?.stringValue {
            return OAuthServerError(code: code, description: first["message"]?.stringValue, httpStatus: response.status)
        }
        let text = response.bodyText.trimmingEdges(of: " \t\r\n")
        if json == nil, !text.isEmpty, text.count <= 100, response.mediaType != "text/html",
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-. ".contains($0)) })
        {
            return OAuthServerError(code: text, httpStatus: response.status)
        }
        return nil
    }

    /// The auth-params of a challenge (`Bearer realm="x", error="invalid_token"`), names lower-cased,
    /// quoted values unescaped (RFC 9110 §11.2). Parameters of every challenge in the header are merged.
    static func challengeParameters(_ header: String) -> [String: String] {
        var result: [String: String] = [:]
        let characters = Array(header)
        var index = 0
        func skip(while predicate: (Character) -> Bool) {
            while index < characters.count, predicate(characters[index]) { index += 1 }
        }
        while index < characters.count {
            skip(while: { $0 == " " || $0 == "," || $0 == "\t" })
            let start = index
            skip(while: { $0 != "=" && $0 != " " && $0 != "," && $0 != "\t" })
            let name = String(characters[start..<index]).lowercased()
            skip(while: { $0 == " " || $0 == "\t" })
            guard index < characters.count, characters[index] == "=" else { continue }  // a scheme name or token68
            index += 1
            skip(while: { $0 == " " || $0 == "\t" })
            var value = ""
            if index < characters.count, characters[index] == "\"" {
                index += 1
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    value.append(characters[index])
                    index += 1
                }
                index += 1
            } else {
                let valueStart = index
                skip(while: { $0 != "," && $0 != " " && $0 != "\t" })
                value = String(characters[valueStart..<index])
            }
            if !name.isEmpty, result[name] == nil { result[name] = value }
        }
        return result
    }
}

extension String {
    fileprivate func trimmingEdges(of set: String) -> String {
        String(drop(while: { set.contains($0) }).reversed().drop(while: { set.contains($0) }).reversed())
    }
}
