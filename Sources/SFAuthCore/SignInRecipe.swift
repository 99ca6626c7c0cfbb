/// How an account was signed in, so that it can be signed in again the same way — to the same
/// server, with the same client, scopes, redirect and grant — without the person repeating every
/// option (`sfauth login --account NAME`). Never holds a secret: a password is asked again, a
/// client secret comes from the environment, a JWT key from its file.
///
/// The server's endpoints and the client id are stored with the credentials themselves
/// (`OAuthCredentials.server`, `clientId`); the recipe adds what the sign-in asked for.
public struct SignInRecipe: Sendable, Equatable, Codable {
    /// The grant that signed the account in.
    public var grant: AuthType
    /// The scopes requested (the server may have granted fewer).
    public var scopes: [String]
    /// The redirect's host, port (0: any free one) and path, for the browser sign-in.
    public var callbackHost: String
    /// See `callbackHost`.
    public var callbackPort: UInt16
    /// See `callbackHost`.
    public var callbackPath: String
    /// Extra authorization parameters (`login_hint`, provider hints); `prompt` is not kept.
    public var parameters: [Parameter]
    /// The username a password or JWT bearer grant named.
    public var username: String?

    /// An authorization parameter as stored.
    public struct Parameter: Sendable, Equatable, Codable {
        /// The parameter's name.
        public var name: String
        /// Its value.
        public var value: String
    }

    /// The recipe of a sign-in with `client` and `grant`.
    public init(client: ClientConfiguration, grant: AuthType, username: String? = nil) {
        self.grant = grant
        scopes = client.scopes
        callbackHost = client.redirect.host
        callbackPort = client.redirect.port
        callbackPath = client.redirect.path
        parameters = client.additionalAuthorizationParameters.filter { $0.name != "prompt" }.map { Parameter(name: $0.name, value: $0.value) }
        self.username = username
    }

    /// The client to sign in with again: the stored client id, these scopes, redirect and
    /// parameters, and `clientSecret` (from outside; never stored).
    public func client(clientId: String, clientSecret: String? = nil) -> ClientConfiguration {
        ClientConfiguration(clientId: clientId, clientSecret: clientSecret, scopes: scopes,
                            redirect: RedirectConfiguration(host: callbackHost, port: callbackPort, path: callbackPath),
                            additionalAuthorizationParameters: parameters.map { AuthorizationParameter(name: $0.name, value: $0.value) })
    }
}

extension OAuthCredentials {
    /// How to sign this account in again: its recipe, or for records written before recipes were
    /// kept, one made from what the record has (the granted scopes, the redirect URI used).
    public var signInRecipe: SignInRecipe {
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
        return SignInRecipe(client: ClientConfiguration(clientId: clientId, scopes: scopes, redirect: redirect),
                            grant: obtainedBy ?? .browser, username: jwtBearerRenewal?.subject ?? username)
    }

    /// The name a person types to pick this account: its alias, else its identifier.
    public var selectableName: String { alias ?? identifier }
}
