import FoundationEssentials

/// How a per-call target is obtained from an account's sign-in, in order of preference, and what
/// each attempt sends. Pure: the server's word on token exchange comes in as a flag.
///
/// - Scopes alone: a refresh asking for them (RFC 6749 §6: narrower than granted, never wider).
/// - A resource: a refresh with `resource` (RFC 8707 §2.2), then — where the server offers it — a
///   token exchange, since some servers ignore `resource` on a refresh.
/// - An audience: a token exchange (RFC 8693 `audience`); no refresh parameter names one.
/// - Entra ID: one resource per token, named by scope (`<resource>/.default`, or the resource's own
///   scopes), from the same refresh token — a refresh, whatever is asked.
public struct TargetPlan: Sendable, Equatable {
    /// The attempts, in order; the first that gives a token for the target wins.
    public let routes: [TargetRoute]
    /// The target.
    public let target: TokenTarget
    /// Whether the server is Entra ID, whose tokens name their resource by scope.
    public let entra: Bool

    /// The plan for `target` at `server`.
    ///
    /// - Parameters:
    ///   - target: what the token is for.
    ///   - server: the account's authorization server.
    ///   - offersExchange: whether the server lists the token exchange grant in its metadata.
    ///   - forceExchange: `--exchange`: exchange, and nothing else.
    /// - Throws: `OAuthError.configuration` when nothing the server offers can give the target.
    public static func make(target: TokenTarget, server: AuthorizationServer, offersExchange: Bool, forceExchange: Bool)
        throws(OAuthError) -> TargetPlan
    {
        let entra = isEntra(server)
        if forceExchange { return TargetPlan(routes: [.exchange], target: target, entra: entra) }
        if entra {
            if target.resource != nil && target.audience != nil {
                throw .configuration("Entra ID issues a token for one resource at a time: give --resource or --audience, not both")
            }
            return TargetPlan(routes: [.refresh], target: target, entra: true)
        }
        if target.audience != nil {
            guard offersExchange else {
                throw .configuration(
                    Problem(
                        "\(server.issuer ?? server.tokenEndpoint) cannot give a token for another audience: it does not offer token exchange (RFC 8693) in its metadata, and a refresh names no audience"
                    ))
            }
            return TargetPlan(routes: [.exchange], target: target, entra: false)
        }
        if target.resource != nil && offersExchange { return TargetPlan(routes: [.refresh, .exchange], target: target, entra: false) }
        return TargetPlan(routes: [.refresh], target: target, entra: false)
    }

    /// Whether `server` is Entra ID (or stands in for it): its token endpoint is `…/oauth2/v2.0/token`.
    public static func isEntra(_ server: AuthorizationServer) -> Bool {
        server.tokenEndpoint.hasSuffix("/oauth2/v2.0/token")
    }

    /// The parameters an attempt by `route` sends for the target.
    public func parameters(for route: TargetRoute) -> [(String, String)] {
        if entra, route == .refresh {
            return [("scope", entraScopes.joined(separator: " "))]
        }
        var parameters: [(String, String)] = []
        if let audience = target.audience { parameters.append(("audience", audience)) }
        if let resource = target.resource { parameters.append(("resource", resource)) }
        if let scopes = target.scopes { parameters.append(("scope", scopes.joined(separator: " "))) }
        return parameters
    }

    /// The scopes an Entra refresh asks for: the resource's (`<resource>/<scope>` for bare names, or
    /// `<resource>/.default`, everything its consent covers), or the scopes as given; with
    /// `offline_access`, so the answer carries the refresh token that covers every resource.
    public var entraScopes: [String] {
        let resource = (target.resource ?? target.audience).map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        var scopes: [String]
        if let resource {
            scopes = target.scopes?.map { $0.contains("/") || Self.openIDScopes.contains($0) ? $0 : resource + "/" + $0 } ?? [resource + "/.default"]
        } else {
            scopes = target.scopes ?? []
        }
        if !scopes.contains("offline_access") { scopes.append("offline_access") }
        return scopes
    }

    private static let openIDScopes: Set<String> = ["openid", "profile", "email", "offline_access"]
}

extension TokenTarget {
    /// Checks a per-call `resource`: an absolute URI without a fragment (RFC 8707 §2) — an https
    /// URL (http only on this machine) for the web, or another scheme an authorization server names
    /// its resources by (Entra's `api://…`).
    public static func requireValidResource(_ resource: String) throws(OAuthError) {
        if isWebResource(resource) { return try ProtectedResource.requireValid(resource) }
        let scheme = resource.prefix { $0 != ":" }
        guard scheme.count < resource.count, let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            resource.count > scheme.count + 1, !resource.contains("#"), !resource.contains(where: { $0.isWhitespace })
        else {
            throw .configuration(
                "the resource '\(TerminalText.escaped(resource))' is not an absolute URI without a fragment (RFC 8707 §2), such as https://api.example/ or api://orders"
            )
        }
    }

    /// Whether `resource` is an http(s) URL, which a protected resource's account may be bound to.
    public static func isWebResource(_ resource: String) -> Bool {
        let lowered = resource.lowercased()
        return lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }
}
