import SFAuthCore

/// Revokes an account's tokens at its server (RFC 7009) — what `AccountBook.forget` does before it
/// removes an account, and what a new sign-in does to the refresh token it replaced (after
/// `SFOAuthCoordinator`'s "revoke before a forced re-login").
///
/// The refresh token is revoked first when there is one: that ends its access tokens too, at
/// Salesforce and at servers that follow RFC 7009 §2.1. The access token is revoked as well, best
/// effort (a server that cannot tie it to the refresh token still ends it). Each request carries
/// `token_type_hint` and `client_id`, and the client secret when one is given (servers such as
/// Glewlwyd revoke only for an authenticated client).
///
/// `revoke` never throws: a server that cannot be reached, refuses, answers 5xx, a cancelled task,
/// or a refresh token the keyring cannot give, all end up in the `RevocationReport`, whose
/// `summary` says in one line what happened.
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

    /// Revokes the account's refresh token (when it has one) and its access token at
    /// `credentials.server.revocationEndpoint` (RFC 7009 §2.1), and reports per token what happened.
    ///
    /// The refresh token is `credentials.refreshToken` when the credentials hold it; when their record
    /// says it is kept in the keyring instead (`refreshTokenPlace == .secretStore`), it is read from
    /// `store` (`CredentialStore.refreshToken(of:)`). A refresh token that cannot be read — the keyring
    /// does not answer, or no store was given — is never skipped silently: its entry is `.failed` with
    /// the reason, and the access token is still revoked. One the keyring no longer has is nothing to
    /// revoke.
    ///
    /// To sign an account out, use `AccountBook.forget(_:revokingWith:removingUnreadable:)`, which
    /// calls this under the account's lock and then removes it.
    ///
    /// - Parameters:
    ///   - credentials: the account's credentials, as stored or as just signed in.
    ///   - store: the store the credentials are kept in, which reads a refresh token kept in the
    ///     keyring; `nil` for credentials that hold their refresh token themselves (never stored, or
    ///     read already).
    /// - Returns: a report with one entry per token, refresh token first. When the server has no
    ///   revocation endpoint, nothing is sent or read and the report has no entries (`endpoint == nil`).
    public func revoke(_ credentials: OAuthCredentials, keptIn store: (any CredentialStore)?) async -> RevocationReport {
        guard let endpoint = credentials.server.revocationEndpoint else {
            return RevocationReport(endpoint: nil, entries: [])
        }
        let hasRefreshToken = credentials.refreshTokenPlace == .secretStore || !(credentials.refreshToken ?? "").isEmpty
        let hints = (hasRefreshToken ? [TokenTypeHint.refreshToken] : []) + (credentials.accessToken.isEmpty ? [] : [.accessToken])

        // Tokens never travel over plain http to another machine, whatever the HTTP client allows.
        do throws(OAuthError) {
            try EndpointURL.requireSecure(endpoint, name: "revocation endpoint")
        } catch {
            return RevocationReport(
                endpoint: endpoint,
                entries: hints.enumerated().map { index, hint in
                    RevocationReport.Entry(token: hint, status: index == 0 ? .failed(error) : .notAttempted)
                })
        }

        // The secret kept with the account, else the one given when it is the one the account signed
        // in with (never another client's secret to this server).
        let kept = (try? store?.clientSecret(of: credentials)) ?? credentials.clientSecret
        var client = ClientConfiguration(
            clientId: credentials.clientId,
            clientSecret: kept ?? clientSecret.flatMap { credentials.accepts(clientSecret: $0) ? $0 : nil })
        client.authentication = credentials.clientAuthentication ?? .post
        if credentials.server.flavor == .github {
            return RevocationReport(endpoint: endpoint, entries: [await revokeAtGitHub(credentials, endpoint: endpoint, client: client)])
        }
        var entries: [RevocationReport.Entry] = []
        var serverAnswered = true
        for hint in hints {
            guard serverAnswered else {
                entries.append(.init(token: hint, status: .notAttempted))
                continue
            }
            let token: String
            switch Self.token(hint, of: credentials, keptIn: store) {
            case .success(let value?): token = value
            case .success(nil): continue  // gone from the keyring: nothing left to revoke
            case .failure(let unreadable):
                entries.append(.init(token: hint, status: .failed(unreadable)))
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

    /// The token to revoke. The refresh token is the one the credentials hold, else the one `store`
    /// keeps for them; `nil` when the keyring no longer has it; a failure when it cannot be read.
    private static func token(
        _ hint: TokenTypeHint, of credentials: OAuthCredentials,
        keptIn store: (any CredentialStore)?
    ) -> Result<String?, OAuthError> {
        guard hint == .refreshToken else { return .success(credentials.accessToken) }
        if let token = credentials.refreshToken, !token.isEmpty { return .success(token) }
        guard let store else {
            return .failure(
                .storage(
                    Problem(
                        "the refresh token of \(credentials.displayLabel) is kept in the keyring, "
                            + "and no store was given to read it from")))
        }
        do {
            return .success(try store.refreshToken(of: credentials))
        } catch .loginRequired {
            return .success(nil)
        } catch {
            return .failure(error)
        }
    }

    /// GitHub's revocation (`GitHub.revocationRequest`): the access token, which GitHub revokes with
    /// its grant; only with the app's client secret, which an account keeps when it signed in with
    /// one (without it, GitHub cannot be asked: the entry says where to revoke by hand).
    private func revokeAtGitHub(
        _ credentials: OAuthCredentials, endpoint: String, client: ClientConfiguration
    ) async -> RevocationReport.Entry {
        guard let secret = client.clientSecret else {
            return .init(
                token: .accessToken,
                status: .failed(
                    .configuration(
                        Problem(
                            "GitHub revokes a token only for the app's own client secret, which \(credentials.displayLabel) does not keep; "
                                + "revoke it at \(GitHub.applicationsPage(of: credentials.server)) (or give the secret in the environment)"))))
        }
        let request = GitHub.revocationRequest(
            accessToken: credentials.accessToken, endpoint: endpoint, clientId: credentials.clientId, clientSecret: secret)
        do throws(OAuthError) {
            let response = try await httpClient.sendForOAuth(request)
            if response.status == 404 { return .init(token: .accessToken, status: .alreadyInvalid(nil)) }  // a token GitHub no longer knows
            switch try RevocationOutcome.interpret(response, endpoint: request.url) {
            case .revoked: return .init(token: .accessToken, status: .revoked)
            case .alreadyInvalid(let error): return .init(token: .accessToken, status: .alreadyInvalid(error))
            }
        } catch {
            return .init(token: .accessToken, status: .failed(error))
        }
    }

    /// One revocation request and what its answer means.
    private func revoke(
        _ token: String, hint: TokenTypeHint, endpoint: String,
        client: ClientConfiguration
    ) async -> RevocationReport.Status {
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
