import SFAuthCore

/// Sends requests with an account's access token (RFC 6750 §2.1) and copes with servers that never
/// say when a token expires: on `401` it renews the token once and sends the request again — the
/// only reliable answer to Salesforce's silent session timeout (`INVALID_SESSION_ID`).
public struct AuthorizedRequester: Sendable {
    private let tokenSource: TokenSource
    private let httpClient: any HTTPClient

    /// Creates a requester that takes tokens from `tokenSource` and sends through `httpClient`.
    public init(tokenSource: TokenSource, httpClient: any HTTPClient) {
        self.tokenSource = tokenSource
        self.httpClient = httpClient
    }

    /// Sends the request `makeRequest` builds for the account's credentials (it resolves the URL
    /// against the instance and refuses hosts the token is not for) with the account's token; after a
    /// `401` renews the token and sends once more.
    ///
    /// - Parameters:
    ///   - account: the account's identifier; `nil` for the default account.
    ///   - makeRequest: builds the request for the credentials it will be sent with (called again,
    ///     with the renewed credentials, after a `401`); its `Authorization` header is replaced.
    /// - Returns: the final response (whatever its status) and the credentials it was sent with.
    /// - Throws: what `TokenSource.credentials` or `makeRequest` throws (a sign-in needed, a renewal
    ///   that failed, a host not allowed), or `.network` when no answer came.
    public func send(account: String?, _ makeRequest: (OAuthCredentials) throws(OAuthError) -> HTTPRequest)
        async throws(OAuthError) -> (response: HTTPResponse, credentials: OAuthCredentials)
    {
        var credentials = try await tokenSource.credentials(account: account)
        var response = try await httpClient.sendForOAuth(authorized(try makeRequest(credentials), with: credentials))
        if response.status == 401 {
            // Expired early (session timeout), or revoked: renew once; a second 401 is the answer.
            credentials = try await tokenSource.credentials(account: credentials.identifier, forceRefresh: true)
            response = try await httpClient.sendForOAuth(authorized(try makeRequest(credentials), with: credentials))
        }
        return (response, credentials)
    }

    private func authorized(_ request: HTTPRequest, with credentials: OAuthCredentials) -> HTTPRequest {
        Self.authorized(request, bearer: credentials.accessToken)
    }

    /// `request` with `Authorization: Bearer token` (RFC 6750 §2.1) in place of any it had — for a
    /// token given from outside, which is sent as it is and cannot be renewed.
    public static func authorized(_ request: HTTPRequest, bearer token: String) -> HTTPRequest {
        var request = request
        request.headers.removeAll { $0.name.lowercased() == "authorization" }
        request.headers.insert(("Authorization", "Bearer \(token)"), at: 0)
        return request
    }
}
