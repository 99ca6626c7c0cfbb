import SFAuth

/// Signing in to a protected resource (`sfauth login --resource URL`, or signing a stored
/// resource account in again): the server and the client are found from the resource
/// (`ResourceSignIn`), so only the client's own choices come from the command line — the
/// environment's and the profile's server settings do not apply.
extension SignInPlan {
    /// The flags that name a server some other way, which `--resource` replaces.
    private static let serverFlagsExcludedByResource: [ConfigurationKey] = [
        .preset, .host, .tenant, .authority, .domain, .instanceURL, .authorizeURL, .tokenURL, .revokeURL, .userinfoURL,
        .deviceAuthorizationURL, .jwtKeyFile, .username, .audience,
    ]

    /// The resource to sign in to: `--resource`, or the resource of the stored account signed in
    /// again; `nil` for any other sign-in.
    ///
    /// - Throws: `OAuthError.configuration` for options that do not go with a resource: another
    ///   way to name the server, another grant, or another resource than the stored account's.
    package static func resourceTarget(_ request: SignInRequest, stored: OAuthCredentials?) throws(OAuthError) -> ResourceTarget? {
        if request.clientMetadataURL != nil && request.resource == nil && stored?.resource == nil {
            throw .configuration("--client-metadata-url goes with --resource")
        }
        guard let resource = request.resource ?? stored?.resource else { return nil }
        if let stored, let own = stored.resource, let given = request.resource, !ProtectedResource.isSame(own, given) {
            throw .configuration("\(stored.selectableName) is bound to \(own), not \(TerminalText.escaped(given)); leave out --account or --resource")
        }
        if let flag = serverFlagsExcludedByResource.first(where: { request.flags[$0] != nil }) {
            let given = flag.commandLineFlag ?? "--" + flag.rawValue
            throw .configuration(
                "--resource finds the server itself; leave out \(given) (--issuer chooses among the resource's authorization servers)")
        }
        if let grant = request.grant {
            throw .configuration("--resource signs in through the browser; leave out \(grant.rawValue)")
        }
        let issuer = request.flags[.issuer]?.value.text ?? stored?.server.issuer
        if let stored, let given = request.flags[.issuer]?.value.text, given != stored.server.issuer {
            throw .configuration(
                "\(stored.selectableName) signs in at \(stored.server.issuer ?? stored.server.tokenEndpoint), not \(TerminalText.escaped(given))")
        }
        return ResourceTarget(
            resource: resource, issuer: issuer, clientMetadataURL: request.clientMetadataURL,
            storedClientId: request.flags[.clientId] == nil ? stored?.clientId : nil, storedCallbackPort: stored?.signInRecipe.callbackPort)
    }

    /// The client's own choices: the client id (`--client-id`; none: a registration), the scopes
    /// (`--scope`, else the stored account's; none: what the resource asks for), the redirect
    /// (`--callback-host`, `--port`, `--callback-path`, else the stored account's), and extra
    /// parameters. The resource goes on the client once it is discovered.
    package static func resourceClient(_ request: SignInRequest, stored: OAuthCredentials?, secret: String?) -> ClientConfiguration {
        let recipe = stored?.signInRecipe
        var redirect = RedirectConfiguration(host: recipe?.callbackHost ?? "127.0.0.1", port: 0, path: recipe?.callbackPath ?? "/callback")
        if case .text(let host)? = request.flags[.callbackHost]?.value { redirect.host = host }
        if case .port(let port)? = request.flags[.callbackPort]?.value { redirect.port = port }
        if case .text(let path)? = request.flags[.callbackPath]?.value { redirect.path = path }
        var parameters = request.flags.parameters.map(\.value)
        if case .text(let hint)? = request.flags[.loginHint]?.value {
            parameters.insert(AuthorizationParameter(name: "login_hint", value: hint), at: 0)
        }
        return ClientConfiguration(
            clientId: request.flags[.clientId]?.value.text ?? "", clientSecret: secret,
            scopes: request.scopes.isEmpty ? (stored?.scopes ?? []) : request.scopes, redirect: redirect,
            additionalAuthorizationParameters: parameters)
    }
}
