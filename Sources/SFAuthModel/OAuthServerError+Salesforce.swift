/// Refusals Salesforce is known to give, whose next step is known.
public enum SalesforceRefusal: Sendable, Equatable {
    /// `OAUTH_APP_BLOCKED`: the connected app is blocked in this org.
    case appBlocked
    /// `invalid_app_access` "user is not admin approved": the app admits only approved users.
    case userNotApproved
    /// `redirect_uri_mismatch`: the app does not list this callback.
    case callbackNotRegistered
    /// `invalid_client_id`: no connected app with this client id (yet).
    case unknownClientId

    /// The next step, in words that name no tool.
    public var nextStep: String {
        switch self {
        case .appBlocked:
            return
                "The connected app is blocked in this org: an administrator can unblock it (Setup, Connected Apps OAuth Usage), or sign in with your own connected app (another client id)."
        case .userNotApproved:
            return
                "The connected app only admits users an administrator approved: ask one to add your profile or permission set to it (Manage Connected Apps, Permitted Users), or use another app (another client id)."
        case .callbackNotRegistered:
            return
                "The connected app does not list this callback: register it exactly (e.g. http://localhost:1717/OauthRedirect), or sign in with the port and callback path that are registered."
        case .unknownClientId:
            return "The org knows no connected app with this client id (a new app needs up to ten minutes to be usable): check the client id."
        }
    }
}

extension OAuthServerError {
    /// The Salesforce refusal this error is, when it is one whose next step is known.
    public var salesforceRefusal: SalesforceRefusal? {
        let description = (self.description ?? "").lowercased()
        switch code.lowercased() {
        case "oauth_app_blocked":
            return .appBlocked
        case "invalid_app_access" where description.contains("admin approved") || description.contains("not admin"),
            _ where description.contains("not admin approved"):
            return .userNotApproved
        case "redirect_uri_mismatch":
            return .callbackNotRegistered
        case "invalid_client_id":
            return .unknownClientId
        default:
            return nil
        }
    }
}
