extension OAuthServerError {
    /// The next step for a refusal Salesforce is known to give, in one sentence; `nil` for others.
    package var salesforceNextStep: String? {
        let description = (self.description ?? "").lowercased()
        switch code.lowercased() {
        case "oauth_app_blocked":
            return "The connected app is blocked in this org: an administrator can unblock it (Setup, Connected Apps OAuth Usage), or sign in with your own connected app (another client id)."
        case "invalid_app_access" where description.contains("admin approved") || description.contains("not admin"),
             _ where description.contains("not admin approved"):
            return "The connected app only admits users an administrator approved: ask one to add your profile or permission set to it (Manage Connected Apps, Permitted Users), or use another app (another client id)."
        case "redirect_uri_mismatch":
            return "The connected app does not list this callback: register it exactly (e.g. http://localhost:1717/OauthRedirect), or sign in with the port and callback path that are registered."
        case "invalid_client_id":
            return "The org knows no connected app with this client id (a new app needs up to ten minutes to be usable): check the client id."
        default:
            return nil
        }
    }

}
