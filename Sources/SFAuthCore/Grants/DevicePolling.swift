/// How to go on after each poll of the token endpoint in the device authorization grant
/// (RFC 8628 §3.4–3.5). Pure: the caller sends the requests and sleeps.
///
/// ```swift
/// var polling = DevicePolling(authorization)
/// while true {
///     let response = try await send(polling.tokenRequest(tokenEndpoint: endpoint, client: client))
///     switch try polling.next(after: response, endpoint: endpoint) {
///     case .granted(let tokens): return tokens
///     case .wait(let seconds): try await sleep(seconds)
///     }
/// }
/// ```
package struct DevicePolling: Sendable, Equatable {
    /// What to do next.
    package enum Step: Sendable, Equatable {
        /// The person approved: these are the tokens.
        case granted(TokenResponse)
        /// Not yet: poll again after this many seconds.
        case wait(seconds: Int)
    }

    /// The device authorization being polled for.
    package let authorization: DeviceAuthorization
    /// The current minimum seconds between polls: the server's `interval`, plus 5 for every
    /// `slow_down` (§3.5).
    package private(set) var interval: Int

    /// Starts polling for `authorization` at its interval.
    package init(_ authorization: DeviceAuthorization) {
        self.authorization = authorization
        self.interval = authorization.interval
    }

    /// The token request for this device code (§3.4).
    package func tokenRequest(tokenEndpoint: String, client: ClientConfiguration) -> HTTPRequest {
        TokenRequest.post(
            to: tokenEndpoint, client: client,
            parameters: [
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("device_code", authorization.deviceCode),
            ])
    }

    /// Reads one poll's response.
    ///
    /// - Throws: `OAuthError.authorizationDenied(access_denied)` when the person declined (§3.5);
    ///   `OAuthError.timedOut` on `expired_token`, when the code expired before anyone approved it;
    ///   `OAuthError.tokenRequestRejected` for any other error the server names; the token
    ///   response's own errors for an unusable answer.
    package mutating func next(after response: HTTPResponse, endpoint: String) throws(OAuthError) -> Step {
        do {
            return .granted(try TokenResponse.decode(response, endpoint: endpoint))
        } catch .tokenRequestRejected(let error) {
            switch error.code {
            case "authorization_pending":
                return .wait(seconds: interval)
            case "slow_down":
                interval = min(interval + 5, DeviceAuthorization.maximumInterval)
                return .wait(seconds: interval)
            case "access_denied":
                throw .authorizationDenied(error)
            case "expired_token":
                throw .timedOut(
                    seconds: authorization.expiresIn,
                    hint:
                        "The code \(authorization.displayUserCode) expired before it was approved; run the sign-in again and approve it within \(authorization.expiresIn / 60) minutes."
                )
            default:
                throw .tokenRequestRejected(error)
            }
        }
    }
}
