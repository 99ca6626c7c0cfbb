import FoundationEssentials

/// A successful token response (RFC 6749 §5.1), with Salesforce's extra fields when present.
package struct TokenResponse: Sendable, Equatable {
    /// `access_token`.
    package var accessToken: String
    /// `token_type`, e.g. `Bearer`. Default when absent: `Bearer`.
    package var tokenType: String
    /// `expires_in` in seconds, when sent (Salesforce never sends it).
    package var expiresIn: Double?
    /// `refresh_token`, when sent.
    package var refreshToken: String?
    /// How many seconds the refresh token lasts, when the server said: GitHub Apps'
    /// `refresh_token_expires_in`, else Keycloak's `refresh_expires_in`. `0` means it has no fixed
    /// expiry (Keycloak's offline tokens).
    package var refreshTokenExpiresIn: Double?
    /// `scope` granted, split on spaces; `nil` when the server did not say (then it is the requested scope, §5.1).
    package var scopes: [String]?
    /// `id_token` (OpenID Connect), when sent.
    package var idToken: String?
    /// Salesforce `instance_url`: where API calls go.
    package var instanceURL: String?
    /// Salesforce `id`: the identity URL `…/id/<org id>/<user id>`.
    package var identityURL: String?
    /// Salesforce `issued_at`, milliseconds since the epoch, converted to a date.
    package var issuedAt: Date?
    /// Salesforce `signature`.
    package var signature: String?

    /// Creates a response from fields.
    package init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Double? = nil, refreshToken: String? = nil,
        refreshTokenExpiresIn: Double? = nil, scopes: [String]? = nil, idToken: String? = nil, instanceURL: String? = nil, identityURL: String? = nil,
        issuedAt: Date? = nil, signature: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.refreshTokenExpiresIn = refreshTokenExpiresIn
        self.scopes = scopes
        self.idToken = idToken
        self.instanceURL = instanceURL
        self.identityURL = identityURL
        self.issuedAt = issuedAt
        self.signature = signature
    }

    /// Interprets the token endpoint's HTTP response: a token response, an RFC 6749 §5.2 error, or
    /// something unusable, each turned into the matching value or `OAuthError`.
    ///
    /// Two answers that are not RFC 6749's are read as what they mean, from any server: an error
    /// member in a `200` answer is that error (GitHub answers every token-endpoint error with `200`:
    /// `bad_verification_code`, `authorization_pending`, `bad_refresh_token`…), and a form-encoded
    /// answer is read like a JSON object of strings (GitHub without `Accept: application/json`,
    /// which sfauth sends, but a proxy or an older server may not honour).
    package static func decode(_ response: HTTPResponse, endpoint: String) throws(OAuthError) -> TokenResponse {
        let json = JSONValue.parse(response.body) ?? formFields(response)
        let refusal = serverError(in: response, json: json)
        if (200..<300).contains(response.status), refusal == nil {
            guard let json, case .object = json else {
                throw .invalidServerResponse(
                    "the token endpoint \(endpoint) answered HTTP \(response.status) with \(describe(response)) instead of a JSON object")
            }
            return try TokenResponse(json: json)
        }
        if let error = refusal {
            // A server that failed (5xx) or is overloaded did not judge the request: try again later.
            if response.status >= 500 || error.code == "temporarily_unavailable" {
                throw .invalidServerResponse(
                    Problem(
                        "the token endpoint \(endpoint) answered HTTP \(response.status) (\(error.summary))",
                        remedy: .tryAgainLater))
            }
            throw .tokenRequestRejected(error)
        }
        throw .invalidServerResponse("the token endpoint \(endpoint) answered HTTP \(response.status) with \(describe(response))")
    }

    /// The longest lifetime an `expires_in` is believed: ten years. A larger value (`1e300`) is
    /// clamped to it, so the expiry stays a date every later computation can handle.
    package static let maximumLifetime: TimeInterval = 10 * 365 * 86_400

    /// The latest `issued_at` accepted: the end of year 9999, in milliseconds. A value outside
    /// `0...latestIssuedAt` is ignored (the time of the response is used instead).
    static let latestIssuedAt: Double = 253_402_300_799_999

    /// Reads the fields, accepting numbers as strings and strings as numbers.
    ///
    /// Every number is range-checked here, where it enters: `expires_in` must be a finite number
    /// of seconds ≥ 0 (larger than `maximumLifetime` is clamped); an `issued_at` that is not a
    /// plausible time is ignored, and so is a refresh token lifetime that is not a number of
    /// seconds ≥ 0 (it only informs people: a sign-in is not refused over it). Tokens must be made
    /// of the characters RFC 6749 allows (Appendix A.12–A.17: printable ASCII), so printing one can
    /// never drive a terminal.
    package init(json: JSONValue) throws(OAuthError) {
        guard let accessToken = json["access_token"]?.stringValue, !accessToken.isEmpty else {
            throw .invalidServerResponse("the token response has no access_token")
        }
        guard Self.isTokenText(accessToken) else {
            throw .invalidServerResponse("the token response's access_token contains characters a token may not have (RFC 6749 Appendix A.12)")
        }
        let tokenType = json["token_type"]?.stringValue ?? "Bearer"
        guard tokenType.lowercased() == "bearer" else {
            throw .invalidServerResponse(
                "the token type '\(TerminalText.escaped(String(tokenType.prefix(40))))' is not supported; only Bearer tokens are")
        }
        var expiresIn: Double?
        if let value = json["expires_in"], value != .null {
            guard let seconds = value.numberValue, seconds >= 0 else {
                throw .invalidServerResponse("the token response's expires_in is not a number of seconds")
            }
            expiresIn = min(seconds, Self.maximumLifetime)
        }
        let refreshToken = Self.refreshToken(in: json)
        if let refreshToken, !Self.isTokenText(refreshToken) {
            throw .invalidServerResponse("the token response's refresh_token contains characters a token may not have (RFC 6749 Appendix A.17)")
        }
        let issuedAt = json["issued_at"]?.numberValue.flatMap { milliseconds in
            (0...Self.latestIssuedAt).contains(milliseconds) ? Date(timeIntervalSince1970: milliseconds / 1000) : nil
        }
        self.init(
            accessToken: accessToken,
            tokenType: tokenType,
            expiresIn: expiresIn,
            refreshToken: refreshToken,
            refreshTokenExpiresIn: Self.refreshTokenLifetime(in: json),
            scopes: json["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) },
            idToken: json["id_token"]?.stringValue,
            instanceURL: json["instance_url"]?.stringValue,
            identityURL: json["id"]?.stringValue,
            issuedAt: issuedAt,
            signature: json["signature"]?.stringValue)
    }

    /// Whether `response` refuses the client's authentication (`invalid_client`, RFC 6749 §5.2) — after
    /// which a secret sent in the body may be tried once in HTTP Basic (`ClientAuthentication`).
    package static func refusesClientAuthentication(_ response: HTTPResponse) -> Bool {
        serverError(in: response, json: JSONValue.parse(response.body) ?? formFields(response))?.code == "invalid_client"
    }

    /// A form-encoded body (`access_token=…&token_type=bearer`) as an object of strings; `nil` for
    /// any other body.
    static func formFields(_ response: HTTPResponse) -> JSONValue? {
        guard response.mediaType == "application/x-www-form-urlencoded", let pairs = FormURLEncoding.parse(Substring(response.bodyText))
        else { return nil }
        return .object(Dictionary(pairs.map { ($0.name, JSONValue.string($0.value)) }, uniquingKeysWith: { _, last in last }))
    }

    /// The refresh token's lifetime in seconds — `refresh_token_expires_in` (GitHub Apps), else
    /// `refresh_expires_in` (Keycloak) — clamped to `maximumLifetime`; `nil` when neither is a
    /// number of seconds ≥ 0.
    static func refreshTokenLifetime(in json: JSONValue) -> Double? {
        for name in ["refresh_token_expires_in", "refresh_expires_in"] {
            if let seconds = json[name]?.numberValue, seconds >= 0 { return min(seconds, maximumLifetime) }
        }
        return nil
    }

    /// The non-empty `refresh_token` of a token response object.
    static func refreshToken(in json: JSONValue) -> String? {
        json["refresh_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The refresh token a successful (2xx) token response carries, read before anything else is
    /// checked: a server that rotates refresh tokens has already retired the old one when it
    /// answers, so the new one must be kept even when the rest of the answer is unusable.
    package static func rotatedRefreshToken(in response: HTTPResponse) -> String? {
        guard (200..<300).contains(response.status), let json = JSONValue.parse(response.body) ?? formFields(response),
            let token = refreshToken(in: json), isTokenText(token)
        else { return nil }
        return token
    }

    /// Whether `text` is made of the characters RFC 6749 allows in tokens: printable ASCII
    /// (`%x20-7E`; Appendix A.12 `access_token`, A.17 `refresh_token`).
    static func isTokenText(_ text: String) -> Bool {
        CredentialFile.isTokenText(text)
    }

    /// An RFC 6749 §5.2 error in a JSON body, or in a form-encoded one (some servers, and Salesforce's
    /// revocation endpoint, answer that way).
    static func serverError(in response: HTTPResponse, json: JSONValue?) -> OAuthServerError? {
        if let json, let code = json["error"]?.stringValue, !code.isEmpty {
            return OAuthServerError(
                code: code, description: json["error_description"]?.stringValue,
                uri: json["error_uri"]?.stringValue, httpStatus: response.status)
        }
        if response.mediaType == "application/x-www-form-urlencoded" {
            return formServerError(Substring(response.bodyText), status: response.status)
        }
        return nil
    }

    /// The error of a form-encoded body (`error=…&error_description=…`), if it names one.
    static func formServerError(_ text: Substring, status: Int) -> OAuthServerError? {
        guard let pairs = FormURLEncoding.parse(text), let code = pairs.first(where: { $0.name == "error" })?.value,
            !code.isEmpty
        else { return nil }
        return OAuthServerError(
            code: code, description: pairs.first(where: { $0.name == "error_description" })?.value,
            uri: pairs.first(where: { $0.name == "error_uri" })?.value, httpStatus: status)
    }

    /// A short description of a body for error messages, never its full content (it might hold secrets):
    /// "an empty body", "an HTML page (title: Bad Gateway)", "a text/plain body of 120 bytes".
    static func describe(_ response: HTTPResponse) -> String {
        if response.body.isEmpty { return "an empty body" }
        let text = response.bodyText
        if response.mediaType == "text/html" || text.lowercased().contains("<html") {
            if let title = htmlTitle(text) { return "an HTML page (title: \(title))" }
            return "an HTML page"
        }
        let type = response.mediaType ?? "untyped"
        return "\(type.first.map { "aeiou".contains($0) } == true ? "an" : "a") \(type) body of \(response.body.count) bytes"
    }

    private static func htmlTitle(_ html: String) -> String? {
        for (open, close) in [("<title>", "</title>"), ("<TITLE>", "</TITLE>")] {
            guard let start = html.firstRange(of: open), let end = html[start.upperBound...].firstRange(of: close) else {
                continue
            }
            let title = html[start.upperBound..<end.lowerBound].split(whereSeparator: \.isWhitespace).joined(separator: " ")
            return title.isEmpty ? nil : String(title.prefix(100))
        }
        return nil
    }
}
