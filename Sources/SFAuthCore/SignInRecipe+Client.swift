extension SignInRecipe {
    /// The recipe of a sign-in with `client` and `grant`.
    package init(client: ClientConfiguration, grant: AuthType, username: String? = nil) {
        self.init(
            grant: grant, scopes: client.scopes, callbackHost: client.redirect.host, callbackPort: client.redirect.port,
            callbackPath: client.redirect.path,
            parameters: client.additionalAuthorizationParameters.filter { $0.name != "prompt" }
                .map { Parameter(name: $0.name, value: $0.value) },
            username: username)
    }

    /// The client to sign in with again: the stored client id, these scopes, redirect and
    /// parameters, and `clientSecret` (from outside; never stored).
    package func client(clientId: String, clientSecret: String? = nil) -> ClientConfiguration {
        ClientConfiguration(
            clientId: clientId, clientSecret: clientSecret, scopes: scopes,
            redirect: RedirectConfiguration(host: callbackHost, port: callbackPort, path: callbackPath),
            additionalAuthorizationParameters: parameters.map { AuthorizationParameter(name: $0.name, value: $0.value) })
    }
}

extension OAuthCredentials {
    /// How to sign this account in again: its recipe, or for records written before recipes were
    /// kept, one made from what the record has (the granted scopes, the redirect URI used).
    package var signInRecipe: SignInRecipe {
        if let recipe { return recipe }
        var redirect = RedirectConfiguration()
        if let parts = EndpointURL.parts(of: redirectURI) {
            redirect.host = parts.host == "::1" ? "[::1]" : parts.host
            // The port of the first sign-in: fixed for servers that register it (Salesforce: 1717).
            redirect.port = UInt16(parts.port ?? 0)
            if let pathStart = redirectURI.dropFirst("http://".count).firstIndex(of: "/") {
                redirect.path = String(redirectURI[pathStart...])
            }
        }
        return SignInRecipe(
            client: ClientConfiguration(clientId: clientId, scopes: scopes, redirect: redirect),
            grant: obtainedBy ?? .browser, username: jwtBearerRenewal?.subject ?? username)
    }
}
