/// The parameters of the redirect back from the authorization endpoint (RFC 6749 §4.1.2, §4.1.2.1;
/// RFC 9207 `iss`), checked against the `state` we sent.
package struct AuthorizationResponse: Sendable, Equatable {
    /// The authorization code (`code`), percent-decoded.
    package var code: String
    /// The `state` echoed by the server; always equal to the one we sent.
    package var state: String
    /// The RFC 9207 `iss` parameter, when the server sent one.
    package var issuer: String?

    /// Creates a response.
    package init(code: String, state: String, issuer: String? = nil) {
        self.code = code
        self.state = state
        self.issuer = issuer
    }
}

/// What a request to the callback path means for the login in progress.
package enum CallbackOutcome: Sendable, Equatable {
    /// A valid redirect carrying a code and our `state`: the flow goes on to the token exchange.
    case authorized(AuthorizationResponse)
    /// A redirect carrying our `state` and an `error`: the server refused; the flow ends.
    case denied(OAuthServerError)
    /// Not a redirect for this login (no or wrong `state`, malformed query, duplicate parameters).
    /// Answer it with an error page but keep waiting: an attacker's request must not end the user's
    /// login, and a stray request is not the server's answer.
    case rejected(reason: String)

    /// Classifies the query string of a request to the callback path.
    ///
    /// - Parameters:
    ///   - query: the raw query, without the `?`, e.g. `code=abc%3D%3D&state=xyz`.
    ///   - expectedState: the `state` sent in the authorization request; compared exactly.
    package init(query: Substring, expectedState: String) {
        guard let pairs = FormURLEncoding.parse(query) else {
            self = .rejected(reason: "the query string is not correctly percent-encoded")
            return
        }
        var parameters = [String: String]()
        for (name, value) in pairs {
            // RFC 6749 §3.1: parameters must not be included more than once.
            guard parameters[name] == nil else {
                self = .rejected(reason: "the parameter '\(name)' appears more than once")
                return
            }
            parameters[name] = value
        }
        guard let state = parameters["state"] else {
            self = .rejected(reason: "the redirect has no 'state' parameter")
            return
        }
        guard constantTimeEquals(state, expectedState) else {
            self = .rejected(reason: "the 'state' parameter does not match this login")
            return
        }
        if let error = parameters["error"] {
            self = .denied(
                OAuthServerError(
                    code: error.isEmpty ? "unknown_error" : error,
                    description: parameters["error_description"],
                    uri: parameters["error_uri"]))
            return
        }
        guard let code = parameters["code"], !code.isEmpty else {
            self = .rejected(reason: "the redirect has neither 'code' nor 'error'")
            return
        }
        self = .authorized(AuthorizationResponse(code: code, state: state, issuer: parameters["iss"]))
    }
}

/// Compares two strings without an early exit on the first differing byte.
func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
    let a = Array(lhs.utf8)
    let b = Array(rhs.utf8)
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for index in a.indices { difference |= a[index] ^ b[index] }
    return difference == 0
}

extension AuthorizationResponse {
    /// The RFC 9207 check (§2.4), by what is known about the issuer:
    /// - the expected issuer is known (discovery, `--issuer`, a profile's `issuer`, or an issuer
    ///   given with explicit endpoints): an `iss` that is present must equal it, and when the server
    ///   advertises the parameter it must be present — otherwise the response may come from another
    ///   server (a mix-up attack) and is refused;
    /// - it is not known (a server given only by its endpoints): any `iss` is accepted here, and
    ///   the caller records it with the account (`OAuthCredentials.authorizationResponseIssuer`);
    ///   `OAuthCredentials.checkIssuer(matches:)` then holds later sign-ins to that account to the same one.
    package func checkIssuer(of server: AuthorizationServer) throws(OAuthError) {
        if let issuer {
            guard let expected = server.issuer else { return }
            guard issuer == expected else {
                throw .invalidServerResponse(
                    Problem(
                        "the authorization response names the issuer '\(TerminalText.escaped(issuer))', not '\(expected)' (RFC 9207): it may come from another server, so it was refused",
                        remedy: .tryAgain))
            }
        } else if server.issuerInAuthorizationResponse == true {
            throw .invalidServerResponse(
                Problem(
                    "the authorization response lacks the 'iss' parameter that \(server.issuer ?? "the server") promises (RFC 9207), so it was refused",
                    remedy: .tryAgain))
        }
    }
}

extension CallbackOutcome {
    /// Classifies a redirect URL the user pasted (the browser ran on another machine, so the redirect
    /// never reached the listener). The path must be the redirect URI's; host and port may differ
    /// (`localhost` vs `127.0.0.1`); the query is judged exactly like one that reached the listener.
    package init(pastedURL: String, redirectURI: String, expectedState: String) {
        let trimmed = pastedURL.split(whereSeparator: \.isWhitespace).joined()
        let withoutFragment = trimmed.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let pastedPath = Self.path(of: parts[0]),
            let expectedPath = Self.path(of: Substring(redirectURI))
        else {
            self = .rejected(
                reason: "that is not the address the browser was sent back to (it has no query); copy the whole address from the address bar")
            return
        }
        guard pastedPath == expectedPath else {
            self = .rejected(reason: "that address is for '\(pastedPath)', not this login's '\(expectedPath)'")
            return
        }
        self.init(query: parts[1], expectedState: expectedState)
    }

    private static func path(of url: Substring) -> Substring? {
        guard let schemeEnd = url.firstRange(of: "://") else { return nil }
        let rest = url[schemeEnd.upperBound...]
        return rest.firstIndex(of: "/").map { rest[$0...] } ?? "/"
    }
}
