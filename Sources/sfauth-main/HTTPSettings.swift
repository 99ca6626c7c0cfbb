import SFAuth
import SFAuthCLI

/// The HTTP client every command uses: libcurl with sfauth's limits, which `SFAUTH_HTTP_TIMEOUT`
/// (seconds for a whole request; the connection gets at most 10 of them) shortens or lengthens —
/// for slow networks, and for scripts that would rather fail fast than wait half a minute.
enum HTTPSettings {
    /// A client with `SFAUTH_HTTP_TIMEOUT` applied, else the given defaults.
    static func client(environment: [String: String], connectTimeout: Duration = .seconds(10),
                       totalTimeout: Duration = .seconds(30)) throws(OAuthError) -> CurlHTTPClient {
        var options = CurlHTTPClient.Options(connectTimeout: connectTimeout, totalTimeout: totalTimeout)
        if let seconds = try SFAuthEnvironment.settings(environment).httpTimeout() {
            options.totalTimeout = .milliseconds(Int64(seconds * 1000))
            options.connectTimeout = min(options.connectTimeout, options.totalTimeout)
        }
        return CurlHTTPClient(options: options)
    }
}
