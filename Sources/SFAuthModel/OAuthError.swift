/// An error response from an authorization server, kept verbatim (RFC 6749 §4.1.2.1, §5.2).
public struct OAuthServerError: Sendable, Equatable, Codable {
    /// The `error` code, e.g. `invalid_grant` or `access_denied`.
    public var code: String
    /// The `error_description`, when the server sent one.
    public var description: String?
    /// The `error_uri`, when the server sent one.
    public var uri: String?
    /// The HTTP status of the response that carried the error; `nil` for a redirect.
    public var httpStatus: Int?
    /// What helps, when the client knows better than the server's words: for a per-call target
    /// the server refused, the sign-in that would grant it. Not part of the server's answer.
    public var nextStep: Remedy?

    private enum CodingKeys: String, CodingKey { case code, description, uri, httpStatus }

    /// Creates a server error.
    public init(code: String, description: String? = nil, uri: String? = nil, httpStatus: Int? = nil, nextStep: Remedy? = nil) {
        self.code = code
        self.description = description
        self.uri = uri
        self.httpStatus = httpStatus
        self.nextStep = nextStep
    }

    /// Whether the error says the grant itself — the refresh token or the code — is no longer good,
    /// so only a new sign-in helps: RFC 6749 §5.2's `invalid_grant`, or GitHub's own names for it
    /// (`bad_refresh_token`, `bad_verification_code`; docs.github.com, "Troubleshooting OAuth app
    /// access token request errors").
    public var rejectsTheGrant: Bool {
        ["invalid_grant", "bad_refresh_token", "bad_verification_code"].contains(code)
    }

    /// The next step of a refusal whose meaning is known (Salesforce's, Entra's), as a remedy.
    public var knownRemedy: Remedy? {
        if let nextStep { return nextStep }
        if let refusal = salesforceRefusal { return .answerSalesforceRefusal(refusal) }
        return entraRefusal.map(Remedy.answerEntraRefusal)
    }

    /// `code: description` or just `code`, for people: safe for a terminal (control and bidi
    /// characters escaped, see `TerminalText`) and at most a few hundred characters.
    public var summary: String {
        let code = Self.displayable(self.code, limit: 100)
        // Without the lines Entra appends to every description ("Trace ID: …", "Correlation ID: …",
        // "Timestamp: …"), which say nothing to the person and push the rest out of a terminal line.
        let description = description.map { text in text.firstRange(of: "\r\nTrace ID:").map { String(text[..<$0.lowerBound]) } ?? text }
        if let description, !description.isEmpty { return "\(code): \(Self.displayable(description, limit: 400))" }
        return code
    }

    private static func displayable(_ text: String, limit: Int) -> String {
        let escaped = TerminalText.escaped(text)
        return escaped.count > limit ? String(escaped.prefix(limit)) + "…" : escaped
    }
}

/// Everything that can end an OAuth flow, grouped by what the caller should do next.
public enum OAuthError: Error, Sendable, Equatable {
    /// The authorization server refused at the authorization endpoint (an `error=` redirect, e.g.
    /// `access_denied` when the user denies consent).
    case authorizationDenied(OAuthServerError)
    /// The token endpoint answered with an RFC 6749 §5.2 error (e.g. `invalid_grant`).
    case tokenRequestRejected(OAuthServerError)
    /// The server answered, but not in a form we understand (HTML error page, bad JSON, 5xx, missing
    /// fields). The problem's remedy says what helps when one thing does (`.tryAgainLater` for a
    /// server that failed for now); without one, the server may be failing.
    case invalidServerResponse(Problem)
    /// No answer: connection refused, DNS, TLS failure, timeout of one HTTP request.
    case network(String)
    /// The flow was cancelled by the user or the embedding program.
    case cancelled
    /// The flow's deadline passed: no redirect arrived, or nobody approved the device code in time.
    /// `seconds` is the time waited; `hint` says what happened and what to do.
    case timedOut(seconds: Int, hint: Problem)
    /// The configuration cannot work (bad URL, insecure endpoint, a port that needs privileges, …).
    case configuration(Problem)
    /// The loopback listener's port is taken by another socket (`EADDRINUSE`), most often another
    /// sign-in waiting on the same fixed port. `address` is `127.0.0.1` or `[::1]`; `heldBy` names
    /// the process holding it (`sf (pid 4242)`) when that could be found.
    case portInUse(port: UInt16, address: String, heldBy: String?)
    /// Something on this machine failed that is neither the configuration nor the server: a
    /// socket, `poll`, or a thread of the loopback listener could not be had (out of descriptors,
    /// memory or threads). The associated value says which call failed and why.
    case localFault(String)
    /// There are no usable stored credentials; a browser login is needed.
    case loginRequired(Problem)
    /// The credential store could not be read or written.
    case storage(Problem)
    /// The ID token in a token response failed validation (OIDC Core §3.1.3.7, §12.2): its signature,
    /// issuer, audience, times or nonce. The associated value says which check failed, in one line.
    case idTokenRejected(String)

    /// What the caller should do about this error.
    public var recovery: Recovery {
        switch self {
        case .authorizationDenied(let error) where error.code == "access_denied": return .cancelledByUser
        case .authorizationDenied, .tokenRequestRejected, .idTokenRejected: return .serverRefused
        case .invalidServerResponse, .network: return .retryLater
        case .cancelled, .timedOut: return .cancelledByUser
        case .configuration, .portInUse, .storage: return .fixConfiguration
        case .localFault: return .localFault
        case .loginRequired: return .logInAgain
        }
    }

    /// What helps, when one thing does: the tool showing the error says it in its own words.
    public var remedy: Remedy? {
        switch self {
        case .configuration(let problem), .loginRequired(let problem), .storage(let problem), .timedOut(_, let problem),
            .invalidServerResponse(let problem):
            return problem.remedy
        case .authorizationDenied(let error), .tokenRequestRejected(let error):
            return error.knownRemedy
        default: return nil
        }
    }

    /// What the caller should do next.
    public enum Recovery: Sendable, Equatable {
        /// Log in again through the browser.
        case logInAgain
        /// A transient failure: try again later.
        case retryLater
        /// The configuration or the environment needs fixing.
        case fixConfiguration
        /// The user cancelled, denied, or did not finish in time.
        case cancelledByUser
        /// The server said no; its error says why.
        case serverRefused
        /// This machine failed (sockets, threads): try again, and check its limits if it persists.
        case localFault
    }
}

extension OAuthError: CustomStringConvertible {
    /// One line: what went wrong and, where we know, what to do — a remedy in words that name no tool.
    public var description: String { description(advising: { $0.description }) }

    /// What went wrong, without the remedy (`description` says both).
    public var summary: String { description(advising: nil) }

    /// One line: what went wrong and what helps, the remedy said by `advising` — a program's own words
    /// for it (its commands, flags and variables). `nil` leaves the remedy out.
    public func description(advising advice: ((Remedy) -> String)?) -> String {
        switch self {
        case .authorizationDenied(let error) where error.code == "access_denied":
            return "The sign-in was denied (\(error.summary)). Sign in again and approve access to continue."
        case .authorizationDenied(let error):
            return "The authorization server refused the sign-in: \(Self.trimmingPeriod(error.summary)).\(Self.nextStep(error, advising: advice))"
        case .tokenRequestRejected(let error):
            let status = error.httpStatus.map { " (HTTP \($0))" } ?? ""
            return "The token endpoint refused the request\(status): \(Self.trimmingPeriod(error.summary)).\(Self.nextStep(error, advising: advice))"
        case .invalidServerResponse(let problem) where problem.remedy == nil:
            return "The server's answer could not be used: \(Self.trimmingPeriod(problem.text)); the server may be failing, try again later."
        case .invalidServerResponse(let problem):
            return "The server's answer could not be used: \(Self.text(of: problem, advising: advice))"
        case .network(let message):
            return "Network error: \(Self.trimmingPeriod(message)). Check the connection and try again."
        case .cancelled:
            return "The sign-in was cancelled."
        case .timedOut(let seconds, let hint):
            return "Timed out after \(seconds) s. \(Self.text(of: hint, advising: advice))"
        case .configuration(let problem):
            return "Configuration error: \(Self.text(of: problem, advising: advice))"
        case .portInUse(let port, let address, let heldBy):
            let taken = "Configuration error: port \(port) on \(address) is already in use" + (heldBy.map { ", held by \($0)" } ?? "")
            if let heldBy, Self.isSignIn(heldBy) {
                return taken + ": probably another sign-in is waiting on it; finish or cancel that one, then try again"
            }
            return taken + ". " + (advice?(.useAnotherCallbackPort) ?? Remedy.useAnotherCallbackPort.description)
        case .localFault(let message):
            return
                "Local failure: \(Self.trimmingPeriod(message)). Try again; if it persists, check this machine's limits (open files, threads, memory)."
        case .loginRequired(let problem):
            return Self.text(of: problem, advising: advice)
        case .storage(let problem):
            return "Credential store error: \(Self.text(of: problem, advising: advice))"
        case .idTokenRejected(let message):
            return "The ID token was refused: \(message). Try again; if it persists, check the issuer, the client id and this machine's clock."
        }
    }

    /// The problem, and its remedy as a sentence of its own.
    private static func text(of problem: Problem, advising advice: ((Remedy) -> String)?) -> String {
        guard let remedy = problem.remedy, let advice else { return problem.text }
        return (problem.text.hasSuffix(".") ? problem.text : problem.text + ".") + " " + advice(remedy)
    }

    /// " " and what to do next, for refusals whose remedy is known (Salesforce's, Entra's); else "".
    private static func nextStep(_ error: OAuthServerError, advising advice: ((Remedy) -> String)?) -> String {
        guard let remedy = error.knownRemedy else { return "" }
        return " " + (advice?(remedy) ?? remedy.description)
    }

    /// Whether a port holder (`name (pid N)`) is a program that signs people in: sfauth, or
    /// Salesforce's `sf`/`sfdx` — the one time "another sign-in is waiting" is more than a guess.
    private static func isSignIn(_ holder: String) -> Bool {
        let name = holder.split(separator: " ").first.map(String.init) ?? holder
        return ["sfauth", "sfauth-main", "sf", "sfdx"].contains(name)
    }

    /// `text` without its final period, so a sentence built around it ends with exactly one.
    private static func trimmingPeriod(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}
