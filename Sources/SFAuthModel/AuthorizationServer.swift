import FoundationEssentials
import Glibc

/// Where an authorization server's endpoints are (RFC 6749 §3; RFC 8414 names).
public struct AuthorizationServer: Sendable, Equatable, Codable {
    /// The `authorization_endpoint` the browser is sent to.
    public var authorizationEndpoint: String
    /// The `token_endpoint` codes and refresh tokens are exchanged at.
    public var tokenEndpoint: String
    /// The `revocation_endpoint` (RFC 7009), when known.
    public var revocationEndpoint: String?
    /// The OpenID Connect `userinfo_endpoint`, when known.
    public var userinfoEndpoint: String?
    /// The `issuer`, when known.
    public var issuer: String?
    /// The `jwks_uri` with the keys that sign ID tokens (OpenID Connect), when known.
    public var jwksURI: String?
    /// The `device_authorization_endpoint` (RFC 8628 §3.1), when known.
    public var deviceAuthorizationEndpoint: String?
    /// Which server-specific conventions apply. Default: `.standard`.
    public var flavor: Flavor
    /// Whether the server puts `iss` in authorization responses (RFC 9207,
    /// `authorization_response_iss_parameter_supported`); then a response without it, or with another
    /// issuer, is refused. `nil` means not advertised.
    public var issuerInAuthorizationResponse: Bool?

    /// Server-specific conventions beyond the RFCs.
    public enum Flavor: String, Sendable, Codable {
        /// Plain OAuth 2.0 / OpenID Connect.
        case standard
        /// Salesforce: `instance_url`, `id`, `issued_at`, `signature` in token responses, no `expires_in`.
        case salesforce
        /// GitHub (github.com or Enterprise Server): OAuth 2.0 without OpenID Connect. Who signed in
        /// comes from the REST API's `GET /user` (`login`, `id`); a token answered without
        /// `expires_in` never expires (OAuth apps); revocation is the REST API's
        /// `DELETE /applications/{client_id}/token` with the app's client secret. (`GitHub` in SFAuthCore.)
        case github
    }

    /// Creates a server description from explicit endpoints.
    public init(
        authorizationEndpoint: String, tokenEndpoint: String, revocationEndpoint: String? = nil,
        userinfoEndpoint: String? = nil, issuer: String? = nil, jwksURI: String? = nil,
        deviceAuthorizationEndpoint: String? = nil, flavor: Flavor = .standard
    ) {
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.issuer = issuer
        self.jwksURI = jwksURI
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.flavor = flavor
    }

    /// Checks that every endpoint is an absolute `https` URL, or `http` to a loopback host
    /// (RFC 8252 §8.1 and our invariant: TLS always, except on this machine).
    public func validate() throws(OAuthError) {
        for (name, endpoint) in [("authorization endpoint", authorizationEndpoint), ("token endpoint", tokenEndpoint)]
            + [
                ("revocation endpoint", revocationEndpoint), ("userinfo endpoint", userinfoEndpoint), ("JWKS URI", jwksURI),
                ("device authorization endpoint", deviceAuthorizationEndpoint),
            ].compactMap({ pair in pair.1.map { (pair.0, $0) } })
        {
            try EndpointURL.requireSecure(endpoint, name: name)
        }
    }
}

/// Checks on endpoint URLs.
package enum EndpointURL {
    /// The parts of an absolute URL we care about.
    package struct Parts: Sendable, Equatable {
        /// `http` or `https`, lower-cased.
        package var scheme: String
        /// The host without brackets, lower-cased (`127.0.0.1`, `::1`, `login.salesforce.com`).
        package var host: String
        /// The port, when given.
        package var port: Int?
    }

    /// Splits an absolute http(s) URL; `nil` for anything else.
    package static func parts(of string: String) -> Parts? {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return Parts(scheme: scheme, host: host, port: components.port)
    }

    /// Whether a host (with or without IPv6 brackets) is this machine's loopback interface:
    /// `localhost`, an address in `127.0.0.0/8`, or `::1` in any of its spellings.
    ///
    /// Strict on purpose, because it decides where plain http is allowed: forms that resolvers read
    /// differently (`127.1`, `0x7f.0.0.1`, leading zeros or signs, percent-encoding) are not loopback.
    /// The transport checks every request with this same rule.
    package static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host == "localhost" { return true }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, host, &address) == 1 else { return false }
            return withUnsafeBytes(of: &address) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part == "0" || !part.hasPrefix("0"), let value = Int(part), value <= 255
            else { return false }
        }
        return parts[0] == "127"
    }

    /// Throws a configuration error unless `string` is https, or http to a loopback host.
    package static func requireSecure(_ string: String, name: String) throws(OAuthError) {
        guard let parts = parts(of: string) else {
            throw .configuration("the \(name) '\(string)' is not an absolute http(s) URL")
        }
        if parts.scheme == "http" && !isLoopback(host: parts.host) {
            throw .configuration("the \(name) '\(string)' uses plain http; only https is allowed, except to this machine (127.0.0.1, ::1, localhost)")
        }
    }
}
