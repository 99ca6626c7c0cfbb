/// Which kind of token a revocation request is about: the `token_type_hint` parameter
/// (RFC 7009 §2.1; values registered in §4.1.2).
public enum TokenTypeHint: String, Sendable, Equatable, Codable, CaseIterable {
    /// `access_token`.
    case accessToken = "access_token"
    /// `refresh_token`.
    case refreshToken = "refresh_token"

    /// "access token" or "refresh token", for messages.
    public var displayName: String {
        switch self {
        case .accessToken: return "access token"
        case .refreshToken: return "refresh token"
        }
    }
}

/// Requests to a token revocation endpoint (RFC 7009 §2.1), as exact HTTP values.
package enum RevocationRequest {
    /// A revocation request: a form POST of `token`, `token_type_hint` (when given) and the client's
    /// `client_id` (RFC 6749 §3.2.1; plus `client_secret` for a confidential client, §2.3.1), sent with
    /// the same headers as a token request:
    ///
    ///     POST <endpoint>
    ///     Content-Type: application/x-www-form-urlencoded
    ///     Accept: application/json
    ///
    ///     token=…&token_type_hint=refresh_token&client_id=…
    ///
    /// Salesforce's `/services/oauth2/revoke` reads `token` and ignores the rest.
    ///
    /// - Parameters:
    ///   - token: the access or refresh token to revoke (`token`).
    ///   - tokenTypeHint: what kind of token it is (`token_type_hint`); `nil` leaves the parameter out.
    ///   - endpoint: the `revocation_endpoint` (RFC 8414 §2).
    ///   - client: the client the token was issued to.
    package static func make(
        token: String, tokenTypeHint: TokenTypeHint?, endpoint: String,
        client: ClientConfiguration
    ) -> HTTPRequest {
        var parameters = [("token", token)]
        if let tokenTypeHint { parameters.append(("token_type_hint", tokenTypeHint.rawValue)) }
        return TokenRequest.post(to: endpoint, client: client, parameters: parameters)
    }
}

/// What a revocation endpoint's answer means for the token (RFC 7009 §2.2).
package enum RevocationOutcome: Equatable, Sendable {
    /// The server answered 200: the token is revoked. RFC 7009 §2.2 answers 200 for a token the
    /// server does not know (already revoked, expired, never issued) as well, since "the purpose of
    /// the revocation request, invalidating the particular token, is already achieved".
    case revoked
    /// The server answered with `invalid_token` or `unsupported_token_type` (RFC 7009 §2.2.1):
    /// nothing is left for the client to revoke. Salesforce answers this way — HTTP 400 with a
    /// *form-encoded* body — for a token that is already invalid. (At a server that follows RFC 7009
    /// to the letter, `unsupported_token_type` means it cannot revoke that kind of token at all; an
    /// access token then ends at its expiry.) Carries the server's error verbatim; `nil` when the
    /// caller learnt it without one.
    case alreadyInvalid(OAuthServerError?)

    /// The error codes that mean "there is nothing left to revoke".
    static let alreadyInvalidCodes: Set<String> = ["invalid_token", "unsupported_token_type"]

    /// Interprets the revocation endpoint's HTTP response.
    ///
    /// - 2xx → `.revoked` (RFC 7009 §2.2; the body is ignored — DOT sends an empty `text/html` one).
    /// - 4xx with `error=invalid_token` or `error=unsupported_token_type`, as JSON or form-encoded
    ///   (Salesforce) → `.alreadyInvalid`.
    /// - Throws: `OAuthError.tokenRequestRejected` with the server's error verbatim for any other
    ///   RFC 6749 §5.2 error (`invalid_client`, `invalid_request`, …: the configuration is wrong);
    ///   `OAuthError.invalidServerResponse` for 5xx (503 per RFC 7009 §2.2.1: the token may still
    ///   be valid, try again later; `Retry-After` is quoted), an HTML page, or any other answer
    ///   without an error code — all of them worth retrying.
    ///
    /// - Parameter endpoint: the URL the request went to, for messages.
    package static func interpret(_ response: HTTPResponse, endpoint: String) throws(OAuthError) -> RevocationOutcome {
        if (200..<300).contains(response.status) { return .revoked }
        let error = revocationError(in: response)
        if (400..<500).contains(response.status), let error {
            if alreadyInvalidCodes.contains(error.code) { return .alreadyInvalid(error) }
            throw .tokenRequestRejected(error)
        }
        if response.status == 503 {
            let retry = response.headers["retry-after"].map { " (Retry-After: \($0))" } ?? ""
            throw .invalidServerResponse(
                Problem(
                    "the revocation endpoint \(endpoint) is temporarily unavailable (HTTP 503)\(retry); the token may still be valid",
                    remedy: .tryAgainLater))
        }
        var message = "the revocation endpoint \(endpoint) answered HTTP \(response.status) with \(TokenResponse.describe(response))"
        if let error { message += " (\(error.summary))" }
        throw .invalidServerResponse(Problem(message))
    }

    /// The RFC 6749 §5.2 error in a JSON or form-encoded body. Also reads a form-encoded body that
    /// arrives with another content type (`error=…&error_description=…` sent as `text/plain` or
    /// without a type), which Salesforce's revocation endpoint has been seen to do.
    static func revocationError(in response: HTTPResponse) -> OAuthServerError? {
        if let error = TokenResponse.serverError(in: response, json: JSONValue.parse(response.body)) { return error }
        let text = response.bodyText
        guard response.mediaType != "text/html", text.hasPrefix("error="), !text.contains("<") else { return nil }
        return TokenResponse.formServerError(Substring(text.trimmingTrailingNewlines()), status: response.status)
    }
}

/// What happened when an account's tokens were revoked at its server, token by token, with a
/// one-line summary for people (`sfauth logout` prints it).
public struct RevocationReport: Sendable, Equatable {
    /// What happened to one token.
    public enum Status: Sendable, Equatable {
        /// The server revoked it (HTTP 200, RFC 7009 §2.2).
        case revoked
        /// The server said it was already invalid (`invalid_token` / `unsupported_token_type`).
        case alreadyInvalid(OAuthServerError?)
        /// The request failed: `.network` / `.cancelled` / `.configuration` when no answer came or
        /// the request could not be sent, `.tokenRequestRejected` when the server refused (e.g.
        /// `invalid_client`), `.invalidServerResponse` for 5xx or an unusable answer — or it was
        /// never sent: `.storage` when the token could not be read from where it is kept (the keyring).
        case failed(OAuthError)
        /// Not sent, because an earlier request of the same logout got no answer from the server
        /// (unreachable, cancelled, or an endpoint that may not be used).
        case notAttempted

        /// Whether the server confirmed the token is no longer usable (`revoked` or `alreadyInvalid`).
        public var isEnded: Bool {
            switch self {
            case .revoked, .alreadyInvalid: return true
            case .failed, .notAttempted: return false
            }
        }
    }

    /// One token's result.
    public struct Entry: Sendable, Equatable {
        /// Which token.
        public var token: TokenTypeHint
        /// What happened to it.
        public var status: Status

        /// Creates an entry.
        public init(token: TokenTypeHint, status: Status) {
            self.token = token
            self.status = status
        }
    }

    /// The `revocation_endpoint` used; `nil` when the server has none (nothing was sent).
    public var endpoint: String?
    /// The tokens in the order they were revoked (refresh token first when there is one).
    public var entries: [Entry]

    /// Creates a report.
    public init(endpoint: String?, entries: [Entry]) {
        self.endpoint = endpoint
        self.entries = entries
    }

    /// The status of one token, `nil` when the report has no entry for it.
    public func status(of token: TokenTypeHint) -> Status? {
        entries.first(where: { $0.token == token })?.status
    }

    /// Whether the server confirmed that the account's tokens are finished: the refresh token when
    /// there was one (revoking it ends its access tokens at Salesforce and, per RFC 7009 §2.1, at
    /// compliant servers), otherwise the access token. `false` when there is no endpoint.
    public var isRevokedAtServer: Bool {
        guard endpoint != nil, let primary = entries.first else { return false }
        return primary.status.isEnded
    }

    /// The host (and port, when the URL names one) of the endpoint, for messages.
    public var serverName: String {
        guard let endpoint, let parts = EndpointURL.parts(of: endpoint) else { return endpoint ?? "the server" }
        let host = parts.host.contains(":") ? "[\(parts.host)]" : parts.host
        return host + (parts.port.map { ":\($0)" } ?? "")
    }

    /// One line for people, e.g. `revoked the refresh token at login.salesforce.com`,
    /// `could not reach idp.example to revoke the tokens (could not connect …); they were only
    /// forgotten locally`, `the server has no revocation endpoint; the tokens were only forgotten locally`.
    public var summary: String {
        guard endpoint != nil else { return "the server has no revocation endpoint; the tokens were only forgotten locally" }
        guard let primary = entries.first else { return "there were no tokens to revoke at \(serverName)" }
        let secondary = entries.dropFirst().first
        let host = serverName
        switch primary.status {
        case .revoked:
            if let secondary, secondary.status == .revoked {
                return "revoked the \(primary.token.displayName) and the \(secondary.token.displayName) at \(host)"
            }
            return "revoked the \(primary.token.displayName) at \(host)"
        case .alreadyInvalid(let error):
            let detail = error.map { " (\($0.code))" } ?? ""
            var line = "\(host) reports the \(primary.token.displayName) was already invalid\(detail)"
            if let secondary, secondary.status == .revoked { line += "; revoked the \(secondary.token.displayName)" }
            return line + "; nothing is left to revoke"
        case .notAttempted:
            return "the tokens were not revoked at \(host); they were only forgotten locally"
        case .failed(let error):
            var line: String
            switch error {
            case .network(let message):
                line = "could not reach \(host) to revoke the tokens (\(message)); they were only forgotten locally"
            case .cancelled:
                line = "revocation at \(host) was cancelled; the tokens were only forgotten locally"
            case .configuration(let message):
                line = "the revocation endpoint cannot be used (\(message)); the tokens were only forgotten locally"
            case .tokenRequestRejected(let serverError):
                let status = serverError.httpStatus.map { "HTTP \($0), " } ?? ""
                line = "\(host) refused to revoke the \(primary.token.displayName) (\(status)\(serverError.summary)); it was only forgotten locally"
            case .invalidServerResponse(let problem):
                line = "\(host) did not revoke the \(primary.token.displayName) (\(problem.text)); it was only forgotten locally"
            case .storage(let problem):
                line = "the \(primary.token.displayName) could not be read (\(problem.text)), so it was not revoked at \(host)"
            default:
                line = "the \(primary.token.displayName) was not revoked at \(host) (\(error)); it was only forgotten locally"
            }
            if let secondary, secondary.status == .revoked {
                line += "; the \(secondary.token.displayName) was revoked"
            }
            return line
        }
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = self
        while let last = text.last, last.isNewline { text.removeLast() }
        return text
    }
}
