import SFAuthCore

/// The proxy's lines on standard error: errors and notices always, one line per request only when
/// verbose. Paths are logged without their query (which may carry data), and never a token: the
/// only header the proxy sets, `Authorization`, appears in no message.
struct ProxyLog: Sendable {
    /// Whether to log every request.
    var verbose: Bool

    /// `GET /v1/models 200 12 ms`, when verbose.
    func request(method: String, path: String, status: Int, milliseconds: Int64) {
        if verbose { StandardError.line("sfauth proxy: \(method) \(path) \(status) \(milliseconds) ms") }
    }

    /// Something a person should know: a refusal, a failure, a request not retried.
    func error(_ text: String) {
        StandardError.line("sfauth proxy: \(text)")
    }

    /// Something worth saying when verbose only (a 401 renewed and retried).
    func notice(_ text: String) {
        if verbose { StandardError.line("sfauth proxy: \(text)") }
    }
}
