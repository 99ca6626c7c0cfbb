import FoundationEssentials
import Glibc
import SFAuthCore

/// Finds an issuer's endpoints from its published metadata (OpenID Connect Discovery, falling back
/// to RFC 8414), and keeps what it fetched for a short while in the cache directory so commands run
/// in a row do not ask again.
public struct DiscoveryClient: Sendable {
    /// How long fetched metadata is reused. Default: 15 minutes.
    public var cacheLifetime: TimeInterval
    private let httpClient: any HTTPClient
    private let cacheDirectory: String?
    private let clock: any AuthClock

    /// Creates a client; `cacheDirectory` `nil` disables the cache.
    ///
    /// - Parameters:
    ///   - httpClient: fetches the metadata. Default: `CurlHTTPClient()`.
    ///   - cacheDirectory: where fetched documents are kept (`cacheDirectory(app:environment:)`); `nil`: no cache.
    ///   - cacheLifetime: how long a cached document is reused. Default: 15 minutes.
    ///   - clock: the time a cached document's age is measured against. Default: `SystemClock()`.
    public init(
        httpClient: any HTTPClient = CurlHTTPClient(), cacheDirectory: String?, cacheLifetime: TimeInterval = 15 * 60,
        clock: any AuthClock = SystemClock()
    ) {
        self.httpClient = httpClient
        self.cacheDirectory = cacheDirectory
        self.cacheLifetime = cacheLifetime
        self.clock = clock
    }

    /// The cache directory of `app` for `environment`: `$XDG_CACHE_HOME/<app>/discovery`, else
    /// `$HOME/.cache/<app>/discovery`; `nil` when neither is set.
    public static func cacheDirectory(app: AppIdentity = .sfauth, environment: [String: String]) -> String? {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/\(app.name)/discovery" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.cache/\(app.name)/discovery" }
        return nil
    }

    /// The metadata of `issuer`.
    ///
    /// - Parameters:
    ///   - issuer: the issuer, exactly as its metadata must name it.
    ///   - forResource: whether a protected resource named the server: then RFC 8414's location is
    ///     tried first, as the MCP specification orders them (`authorizationServerLocations`).
    ///     Default: `false` (OpenID Connect's first).
    /// - Throws: `OAuthError.configuration` when no location has metadata for exactly this
    ///   issuer; `.network` when the server cannot be reached.
    public func discover(issuer: String, forResource: Bool = false) async throws(OAuthError) -> DiscoveryDocument {
        try EndpointURL.requireSecure(issuer, name: "issuer")
        if issuer.contains(Entra.tenantPlaceholder) {
            throw .configuration(
                "'\(issuer)' is Entra's issuer template, not a place with metadata: give the tenant instead (…/organizations/v2.0, …/common/v2.0, or your tenant id)"
            )
        }
        let locations =
            forResource ? DiscoveryDocument.authorizationServerLocations(issuer: issuer) : DiscoveryDocument.locations(issuer: issuer)
        if let cached = cachedBody(for: issuer),
            let document = try? DiscoveryDocument.decode(
                HTTPResponse(status: 200, body: cached), issuer: issuer, location: locations[0])
        {
            return document
        }
        var lastError: OAuthError?
        for location in locations {
            let response = try await httpClient.sendForOAuth(HTTPRequest(method: "GET", url: location, headers: [("Accept", "application/json")]))
            if response.status == 404 {
                lastError = .configuration("no server metadata at \(location) (HTTP 404)")
                continue
            }
            let document = try DiscoveryDocument.decode(response, issuer: issuer, location: location, namedByResource: forResource)
            store(response.body, for: issuer)
            return document
        }
        throw lastError ?? .configuration("no server metadata for \(issuer)")
    }

    // MARK: - Cache (best effort: failures only mean fetching again)

    private func cachePath(for issuer: String) -> String? {
        cacheDirectory.map { $0 + "/" + FormURLEncoding.encode(issuer) + ".json" }
    }

    private func cachedBody(for issuer: String) -> [UInt8]? {
        guard let path = cachePath(for: issuer) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let age = clock.now().timeIntervalSince1970 - TimeInterval(info.st_mtim.tv_sec)
        guard age >= 0, age < cacheLifetime else { return nil }
        return try? POSIXFile.read(path)
    }

    private func store(_ body: [UInt8], for issuer: String) {
        guard let directory = cacheDirectory, let path = cachePath(for: issuer) else { return }
        try? POSIXFile.makePrivateDirectory(directory)
        try? POSIXFile.writeAtomically(body, to: path, directory: directory)
    }
}
