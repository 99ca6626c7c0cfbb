import SFAuth

/// Signing in again to a stored account the way it was signed in (`login --account NAME`, and
/// `login --force`): its own server, client, scopes, redirect and grant, from its `SignInRecipe`.
/// Options that name another server are refused — a sign-in meant for one account must never
/// open another server's login page, nor touch the account's tokens.
struct StoredAccountSignIn {
    /// The account signed in again.
    let credentials: OAuthCredentials

    /// Refuses options that name a server other than the account's.
    ///
    /// - Parameters:
    ///   - flags: the command line's configuration layer.
    ///   - resolved: what those flags (with the environment and profile) resolve to.
    func requireSameServer(flags: ConfigurationLayer, resolved: () throws(OAuthError) -> ServerSelection) throws(OAuthError) {
        guard flags.values.keys.contains(where: { $0.role == .choosesServer }) else { return }
        let server = credentials.server
        let named = try resolved()
        let same: Bool
        switch named {
        case .known(let other): same = other.tokenEndpoint == server.tokenEndpoint
        case .discover(let issuer, _): same = server.issuer.map { $0 == issuer || Entra.isDocumentedIssuer($0, for: issuer) } ?? false
        case .protectedResource(let target): same = credentials.resource.map { ProtectedResource.isSame($0, target.resource) } ?? false
        }
        guard same else {
            let theirs =
                named.issuerToDiscover
                ?? {
                    if case .known(let other) = named { return other.tokenEndpoint }
                    return ""
                }()
            throw .configuration(
                "\(credentials.selectableName) signs in at \(server.issuer ?? server.tokenEndpoint), but the options name \(theirs); to sign in there, leave out --account and --force"
            )
        }
    }

    /// The client to sign in with: the recipe's, with the secret given now (never stored).
    func client(secret: String?, scopes: [String]) -> ClientConfiguration {
        var client = credentials.signInRecipe.client(clientId: credentials.clientId, clientSecret: secret)
        if !scopes.isEmpty { client.scopes = scopes }
        return client
    }

    /// The grant the account was signed in with. A password will be asked again; a JWT bearer
    /// account signs with its recorded key file.
    func grantPlan() throws(OAuthError) -> SignInPlan.GrantPlan {
        let recipe = credentials.signInRecipe
        switch recipe.grant {
        case .browser, .refresh: return .browser
        case .deviceCode: return .deviceCode
        case .clientCredentials: return .clientCredentials
        case .password:
            guard let username = recipe.username else {
                throw .configuration(
                    "\(credentials.selectableName) was signed in with a password, but its username is not recorded; give --password --username NAME")
            }
            return .password(username: username)
        case .jwtBearer:
            guard let renewal = credentials.jwtBearerRenewal else {
                throw .configuration(
                    "\(credentials.selectableName) was signed in with a JWT assertion, but its key file is not recorded; give --jwt-key-file")
            }
            return .jwtBearer(keyFile: renewal.keyFile, keyID: renewal.keyID, username: renewal.subject, audience: renewal.audience)
        }
    }
}
