/// Why the proxy answers a request itself instead of forwarding it: the status it answers with and
/// a short reason, which is both the plain-text body and the log line. Never carries a token.
package struct ProxyRefusal: Error, Sendable, Equatable {
    /// The HTTP status answered, e.g. `400`, `403`, `405`.
    package var status: Int
    /// One short sentence: what was refused and why.
    package var reason: String

    /// A refusal with `status` and `reason`.
    package init(_ status: Int, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}
