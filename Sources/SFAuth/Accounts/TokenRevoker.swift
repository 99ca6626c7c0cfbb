import SFAuthCore

/// Revokes an account's tokens at its server (RFC 7009), as `sfauth logout` does before it forgets
/// the account — after `SFOAuthCoordinator`'s "revoke before a forced re-login".
///
/// The refresh token is revoked first when there is one: that ends its access tokens too, at
/// Salesforce and at servers that follow RFC 7009 §2.1. The access token is revoked as well, best
/// effort (a server that cannot tie it to the refresh token still ends it). Each request carries
/// `token_type_hint` and `client_id`, and the client secret when one is given (servers such as
/// Glewlwyd revoke only for an authenticated client).
///
/// `revoke` never throws: a server that cannot be reached, refuses, answers 5xx, or a cancelled
/// task, all end up in the `RevocationReport`, whose `summary` says in one line what happened.
/// Once a request gets no answer at all (unreachable, cancelled, an endpoint that may not be used),
/// the remaining token is not tried, so a dead host costs one timeout, not two.
public struct TokenRevoker: Sendable {
    private let httpClient: any HTTPClient
    private let clientSecret: String?

    /// Creates a revoker that sends its requests through `httpClient`. Default: a `CurlHTTPClient`
    /// (which loads libcurl on its first request).
    ///
    /// - Parameters:
    ///   - httpClient: sends the revocation requests. Default: `CurlHTTPClient()`.
    ///   - clientSecret: the `client_secret` of a confidential client, sent with each
    ///     request (RFC 7009 §2.1: the client "also includes its authentication credentials"). Give it
    ///     only for the client it belongs to. Default: `nil` (a public client).
    public init(httpClient: any HTTPClient = CurlHTTPClient(), clientSecret: String? = nil) {
        self.httpClient = httpClient
        self.clientSecret = clientSecret
    }

    /// Revokes `credentials.refreshToken` (when present) and `credentials.accessToken` at
    /// `credentials.server.revocationEndpoint` (RFC 7009 §2.1), and reports per token what happened.
    ///
    /// Pass credentials whose `refreshToken` is filled in: when the store keeps the refresh token
    /// elsewhere (a keyring), read it into the credentials first, or only the access token is revoked.
    ///
    /// - Returns: a report with one entry per token, refresh token first. When the server has no
    ///   revocation endpoint, nothing is sent and the report has no entries (`endpoint == nil`).
    public func revoke(_ credentials: OAuthCredentials) async -> RevocationReport {
        guard let endpoint = credentials.server.revocationEndpoint else {
            return RevocationReport(endpoint: nil, entries: [])
        }
        var tokens: [(TokenTypeHint, String)] = []
        if let refreshToken = credentials.refreshToken, !refreshToken.isEmpty { tokens.append((.refreshToken, refreshToken)) }
        if !credentials.accessToken.isEmpty { tokens.append((.accessToken, credentials.accessToken)) }

        // Tokens never travel over plain http to another machine, whatever the HTTP client allows.
        do throws(OAuthError) {
            try EndpointURL.requireSecure(endpoint, name: "revocation endpoint")
        } catch {
            return RevocationReport(endpoint: endpoint, entries: tokens.enumerated().map { index, token in
                RevocationReport.Entry(token: token.0, status: index == 0 ? .failed(error) : .notAttempted)
            })
        }

        let client = ClientConfiguration(clientId: credentials.clientId, clientSecret: clientSecret)
        var entries: [RevocationReport.Entry] = []
        var serverAnswered = true
        for (hint, token) in tokens {
            guard serverAnswered else {
                entries.append(.init(token: hint, status: .notAttempted))
                continue
            }
            let status = await revoke(token, hint: hint, endpoint: endpoint, client: client)
            if case .failed(let error) = status {
                switch error {
                case .network, .cancelled, .configuration: serverAnswered = false
                default: break
                }
            }
            entries.append(.init(token: hint, status: status))
        }
        return RevocationReport(endpoint: endpoint, entries: entries)
    }

    /// One revocation request and what its answer means.
    private func revoke(_ token: String, hint: TokenTypeHint, endpoint: String,
                        client: ClientConfiguration) async -> RevocationReport.Status {
        let request = RevocationRequest.make(token: token, tokenTypeHint: hint, endpoint: endpoint, client: client)
        do throws(OAuthError) {
            let response = try await httpClient.sendForOAuth(request)
            switch try RevocationOutcome.interpret(response, endpoint: endpoint) {
            case .revoked: return .revoked
            case .alreadyInvalid(let serverError): return .alreadyInvalid(serverError)
            }
        } catch {
            return .failed(error)
        }
    }
}
