/// Refusals Microsoft Entra ID is known to give, by their `AADSTS` number, whose next step is known
/// (learn.microsoft.com, "Microsoft Entra authentication and authorization error codes").
public enum EntraRefusal: Sendable, Equatable {
    /// AADSTS7000218: the app is not a public client, so the token endpoint wants a secret.
    case publicClientFlowsDisabled
    /// AADSTS50011 (and AADSTS500111 at the token endpoint): the redirect URI is not registered.
    case redirectNotRegistered(String?)
    /// AADSTS65001: nobody consented to the app for this user and resource.
    case consentRequired
    /// AADSTS28000: the scopes name more than one resource; Entra issues a token for one resource.
    case oneResourcePerToken

    /// The next step, in words that name no tool.
    public var nextStep: String {
        switch self {
        case .publicClientFlowsDisabled:
            return
                "The app registration is not a public client: in the Entra admin center, open the app, Authentication, and set \"Allow public client flows\" to Yes (or give the client secret of a Web app)."
        case .redirectNotRegistered(let uri):
            let which = uri.map { "'\($0)'" } ?? "this redirect URI"
            return
                "The app registration does not list \(which): add http://localhost under Authentication, \"Mobile and desktop applications\" (Entra then accepts any port), or sign in with a redirect URI it lists."
        case .consentRequired:
            return
                "Nobody consented to the app for these scopes: sign in again in the browser and accept, or ask an administrator to grant consent for the organization."
        case .oneResourcePerToken:
            return
                "Entra issues a token for one resource at a time: ask for the scopes of one API only (plus openid, profile, email, offline_access), and sign in separately for another API."
        }
    }
}

extension OAuthServerError {
    /// The Entra refusal this error is, read from the `AADSTS<number>:` that starts Entra's
    /// `error_description`.
    public var entraRefusal: EntraRefusal? {
        guard let description, description.hasPrefix("AADSTS") else { return nil }
        let number = description.dropFirst("AADSTS".count).prefix { $0.isNumber }
        switch number {
        case "7000218": return .publicClientFlowsDisabled
        case "50011", "500111":
            // "The redirect URI 'http://…' specified in the request does not match …"
            let quoted = description.split(separator: "'", omittingEmptySubsequences: false)
            return .redirectNotRegistered(quoted.count > 2 ? String(quoted[1]) : nil)
        case "65001": return .consentRequired
        case "28000": return .oneResourcePerToken
        default: return nil
        }
    }
}
