import SFAuth

/// The HTTP client every command uses: libcurl with sfauth's limits, which `SFAUTH_HTTP_TIMEOUT`
/// (seconds for a whole request; the connection gets at most 10 of them) shortens or lengthens —
/// for slow networks, and for scripts that would rather fail fast than wait half a minute.
enum HTTPSettings {
    /// The variable: `SFAUTH_HTTP_TIMEOUT`.
    static let timeoutVariable = "SFAUTH_HTTP_TIMEOUT"

    /// A client with `SFAUTH_HTTP_TIMEOUT` applied, else the given defaults.
    static func client(environment: [String: String], connectTimeout: Duration = .seconds(10),
                       totalTimeout: Duration = .seconds(30)) throws(OAuthError) -> CurlHTTPClient {
        var options = CurlHTTPClient.Options(connectTimeout: connectTimeout, totalTimeout: totalTimeout)
        if let text = environment[timeoutVariable], !text.isEmpty {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 3600 else {
                throw .configuration("\(timeoutVariable) must be a number of seconds between 0 and 3600, not '\(text)'")
            }
            options.totalTimeout = .milliseconds(Int64(seconds * 1000))
            options.connectTimeout = min(options.connectTimeout, options.totalTimeout)
        }
        return CurlHTTPClient(options: options)
    }
}
