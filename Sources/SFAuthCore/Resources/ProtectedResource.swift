import FoundationEssentials

/// The rules for a protected resource's URL (RFC 8707 §2, RFC 9728, the MCP authorization
/// specification): how it is written, where its metadata is published, which authorization servers
/// may issue tokens for it, and where a token bound to it may be sent.
public enum ProtectedResource {
    /// Checks a resource indicator (RFC 8707 §2): an absolute `https` URL — or `http` to this
    /// machine — without a fragment.
    ///
    /// - Throws: `OAuthError.configuration` naming what is wrong.
    public static func requireValid(_ resource: String) throws(OAuthError) {
        try EndpointURL.requireSecure(resource, name: "resource")
        if resource.contains("#") {
            throw .configuration(
                "the resource '\(TerminalText.escaped(resource))' has a fragment (#…), which a resource indicator must not have (RFC 8707 §2)")
        }
    }

    /// The form resources are stored and compared in (MCP's canonical server URI): scheme and host
    /// in lower case, the default port left out, no fragment, and the bare origin without a
    /// trailing `/` — `HTTPS://MCP.Example:443/` and `https://mcp.example` are one resource. The path
    /// and query stay as written: `/mcp` and `/mcp/` may be different resources.
    ///
    /// - Throws: `OAuthError.configuration` when `resource` is not a valid resource indicator.
    public static func canonical(_ resource: String) throws(OAuthError) -> String {
        try requireValid(resource)
        guard let location = Location(resource) else {
            throw .configuration("the resource '\(TerminalText.escaped(resource))' is not an absolute http(s) URL")
        }
        return location.origin + (location.path == "/" ? "" : location.path) + (location.query.map { "?" + $0 } ?? "")
    }

    /// Whether two resource URLs name the same resource (`canonical` of both is equal). RFC 9728
    /// §3.3 asks for identical values; only spellings of one URL are taken as equal.
    public static func isSame(_ first: String, _ second: String) -> Bool {
        guard let first = try? canonical(first), let second = try? canonical(second) else { return false }
        return first == second
    }

    /// Where the resource's metadata is published when its challenge does not say (RFC 9728 §3.1):
    /// `/.well-known/oauth-protected-resource` inserted before the resource's path, then at the
    /// root of its origin (the MCP specification's fallback).
    public static func metadataLocations(for resource: String) -> [String] {
        guard let location = Location(resource) else { return [] }
        let root = location.origin + "/.well-known/oauth-protected-resource"
        var path = location.path
        while path.hasSuffix("/") { path.removeLast() }
        return path.isEmpty ? [root] : [root + path, root]
    }

    /// Whether `metadataURL`, named by the resource's challenge, may be trusted for it: on the
    /// resource's own origin. A challenge is unauthenticated; metadata elsewhere could name an
    /// authorization server of an attacker's choosing for any resource it likes.
    public static func isOwnMetadataLocation(_ metadataURL: String, for resource: String) -> Bool {
        guard let metadata = Location(metadataURL), let resource = Location(resource) else { return false }
        return metadata.origin == resource.origin
    }

    /// Checks that `issuer` may issue tokens for `resource`: a secure URL (https, or http on this
    /// machine), and `https` whenever the resource is not on this machine — a token for a remote
    /// resource is never obtained over plain http.
    ///
    /// - Throws: `OAuthError.configuration` naming the authorization server.
    public static func requireAuthorizationServer(_ issuer: String, for resource: String) throws(OAuthError) {
        try EndpointURL.requireSecure(issuer, name: "authorization server")
        guard let server = Location(issuer), let protected = Location(resource) else { return }
        if server.scheme == "http" && !EndpointURL.isLoopback(host: protected.host) {
            throw .configuration(
                "the authorization server '\(TerminalText.escaped(issuer))' of \(TerminalText.escaped(resource)) uses plain http; a token for a resource on another machine is only obtained over https"
            )
        }
    }

    /// Whether a token bound to `resource` may be sent to `url`: the same origin (scheme, host and
    /// port) and a path within the resource's — `https://mcp.example/mcp` covers
    /// `https://mcp.example/mcp` and `https://mcp.example/mcp/tools`, not `https://mcp.example/mcpx`
    /// nor `https://mcp.example/other`.
    public static func covers(_ url: String, resource: String) -> Bool {
        guard let target = Location(url), let bound = Location(resource), target.origin == bound.origin else { return false }
        var base = bound.path
        while base.hasSuffix("/") { base.removeLast() }
        return base.isEmpty || target.path == base || target.path.hasPrefix(base + "/")
    }

    /// An absolute http(s) URL in parts, lower-cased where case does not matter.
    struct Location {
        var scheme: String
        var host: String
        var port: Int?
        var path: String
        var query: String?

        init?(_ url: String) {
            guard let parts = EndpointURL.parts(of: url), let components = URLComponents(string: url) else { return nil }
            scheme = parts.scheme
            host = parts.host
            let defaultPort = scheme == "https" ? 443 : 80
            port = parts.port == defaultPort ? nil : parts.port
            path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            query = components.percentEncodedQuery
        }

        /// `scheme://host[:port]`, IPv6 hosts in brackets.
        var origin: String {
            let bracketed = host.contains(":") ? "[\(host)]" : host
            return "\(scheme)://\(bracketed)" + (port.map { ":\($0)" } ?? "")
        }
    }
}
