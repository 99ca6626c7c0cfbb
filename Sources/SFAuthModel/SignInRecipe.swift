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

        /// A parameter.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A recipe from its parts (the stored record's fields).
    public init(
        grant: AuthType, scopes: [String], callbackHost: String, callbackPort: UInt16, callbackPath: String,
        parameters: [Parameter], username: String?
    ) {
        self.grant = grant
        self.scopes = scopes
        self.callbackHost = callbackHost
        self.callbackPort = callbackPort
        self.callbackPath = callbackPath
        self.parameters = parameters
        self.username = username
    }
}
