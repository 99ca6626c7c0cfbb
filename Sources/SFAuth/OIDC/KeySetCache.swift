import SFAuthCore
import Synchronization

/// The servers' signing keys (JWK Sets), fetched over the `HTTPClient` and kept in memory per
/// `jwks_uri` for as long as the cache lives (a coordinator's lifetime), so a second sign-in or
/// refresh does not fetch them again. A key set is replaced only when `fetch` is asked to refresh it
/// (a token named a key the cached set lacks: the server rotated its keys).
final class KeySetCache: Sendable {
    /// A key set, and whether it was fetched by the call that returned it (then refetching cannot help).
    struct Lookup: Sendable {
        var keySet: JSONWebKeySet
        var fetchedNow: Bool
    }

    private let httpClient: any HTTPClient
    private let keySets = Mutex<[String: JSONWebKeySet]>([:])

    init(httpClient: any HTTPClient) {
        self.httpClient = httpClient
    }

    /// The key set at `uri`: the cached one, unless `refresh` is set or none is cached.
    ///
    /// - Throws: `.network` when the server cannot be reached, `.invalidServerResponse` when its
    ///   answer is not a JWK Set, `.configuration` for a URI that is not https (or http to loopback).
    func keySet(at uri: String, refresh: Bool = false) async throws(OAuthError) -> Lookup {
        if !refresh, let cached = keySets.withLock({ $0[uri] }) {
            return Lookup(keySet: cached, fetchedNow: false)
        }
        try EndpointURL.requireSecure(uri, name: "JWKS URI")
        let response = try await httpClient.sendForOAuth(
            HTTPRequest(
                method: "GET", url: uri, headers: [("Accept", "application/jwk-set+json, application/json")]))
        let keySet = try JSONWebKeySet.decode(response, uri: uri)
        keySets.withLock { $0[uri] = keySet }
        return Lookup(keySet: keySet, fetchedNow: true)
    }
}
