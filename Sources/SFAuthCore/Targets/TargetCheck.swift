import FoundationEssentials

/// Whether an answer gives what the target asked for — never silently wider, never for someone
/// else: a server may ignore `resource` on a refresh (idpyoidc) or drop it from an exchange and
/// still answer 200 with a token for the client itself.
public enum TargetCheck {
    /// What is wrong with `response` as a token for `plan`'s target; `nil` when nothing is.
    ///
    /// - The scopes granted, when the server names them, must be among those asked (RFC 6749 §3.3
    ///   lets it grant fewer, never more).
    /// - A JWT access token's `aud` must name the audience or resource asked for (RFC 8707 §2,
    ///   RFC 8693 §2.1). Entra names its audience in its own way (an application id or URI), and its
    ///   scope-named resources are taken as the server's answer. An opaque token for an audience or a
    ///   resource is refused: nothing shows the server did not ignore what was asked.
    package static func problem(with response: TokenResponse, for plan: TargetPlan) -> String? {
        let target = plan.target
        if !plan.entra, let asked = target.scopes, let granted = response.scopes {
            let wider = granted.filter { !asked.contains($0) }
            if !wider.isEmpty {
                return "the server granted '\(granted.joined(separator: " "))', wider than the '\(asked.joined(separator: " "))' asked for"
            }
        }
        guard !plan.entra, target.audience != nil || target.resource != nil else { return nil }
        guard let audiences = audiences(of: response.accessToken) else {
            // A server that does not know `resource` ignores it (RFC 6749 §3.2: unknown parameters are
            // ignored) and answers with a token for itself; an opaque token cannot show otherwise.
            return
                "the server's token does not say what it is for (it is not a JWT naming an audience), so it cannot be shown to be for \(target.summary); sfauth hands out only tokens shown to be for the audience or resource asked"
        }
        if let audience = target.audience, !audiences.contains(audience) {
            return "the server issued a token for \(describe(audiences)), not for the audience '\(audience)'"
        }
        if let resource = target.resource, !audiences.contains(where: { $0 == resource || ProtectedResource.isSame($0, resource) }) {
            return "the server issued a token for \(describe(audiences)), not for the resource '\(resource)': it did not honour the resource"
        }
        return nil
    }

    /// The `aud` of a JWT access token (a string or an array of them); `nil` when the token is not a
    /// JWT or names no audience.
    public static func audiences(of accessToken: String) -> [String]? {
        let parts = accessToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 || parts.count == 5, let payload = Base64URL.decode(parts[1]), let claims = JSONValue.parse(payload) else {
            return nil
        }
        switch claims["aud"] {
        case .string(let audience)?: return [audience]
        case .array(let values)?:
            let audiences = values.compactMap { if case .string(let audience) = $0 { audience } else { nil } }
            return audiences.isEmpty ? nil : audiences
        default: return nil
        }
    }

    private static func describe(_ audiences: [String]) -> String {
        audiences.map { "'\(TerminalText.escaped(String($0.prefix(200))))'" }.joined(separator: ", ")
    }
}
