/// What went wrong, in words that name no tool, and what helps, as a value — so that each program
/// showing the error says the remedy in its own words: `sfauth` names its commands, flags and
/// variables (`Run sfauth login --account work.`), a tool embedding SFAuth names its own.
///
/// Written like a string where no remedy applies: `.storage("\(path) cannot be read")`.
public struct Problem: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// What happened (and any advice that names no tool), without a final period.
    public var text: String
    /// What helps, when one thing does.
    public var remedy: Remedy?

    /// A problem and what helps.
    public init(_ text: String, remedy: Remedy? = nil) {
        self.text = text
        self.remedy = remedy
    }

    /// A problem without a remedy.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// A problem without a remedy, from an interpolated string.
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }

    /// The text.
    public var description: String { text }
}

/// What helps after an error. `description` says it in words that name no tool; a program says it
/// in its own (see `OAuthError.description(advising:)`).
public enum Remedy: Sendable, Equatable, CustomStringConvertible {
    /// Sign in again — to the account named (the name a person selects it by, and the grant it was
    /// signed in with), or to any account when `account` is `nil`.
    case signIn(account: String?, grant: AuthType?)
    /// Give the client secret (it is never stored), so that the token of the account named renews
    /// itself (or sign that account in again).
    case provideClientSecret(account: String?)
    /// Choose which stored account is the default, or name one.
    case chooseDefaultAccount
    /// Keep refresh tokens in the keyring again: the account's refresh token is there.
    case allowKeyringStorage
    /// Keep refresh tokens in a file: the keyring cannot be used.
    case useFileStorage
    /// Remove the damaged record of the account with this identifier, then sign in again.
    case removeDamagedAccount(identifier: String)
    /// Keep the credentials in another directory.
    case useAnotherCredentialsDirectory
    /// Use a fixed callback port (and register it with the server when it wants exact redirects).
    case chooseCallbackPort
    /// The callback port is held by a program that is not a sign-in: stop it, or sign in on
    /// another port (registered where the server matches redirects exactly).
    case useAnotherCallbackPort
    /// Give the server's device authorization endpoint.
    case giveDeviceAuthorizationEndpoint
    /// Ask for scopes: none was asked for, and the server may refuse such a request.
    case askForScopes
    /// Forget the account on this machine only: its secret store cannot be reached now.
    case forgetLocally(account: String)
    /// Allow the token to be sent to this host (not one of the account's own), if it is trusted.
    case allowHost(String)
    /// What Salesforce's refusal asks for: another client id, an administrator, a registered callback.
    case answerSalesforceRefusal(SalesforceRefusal)
    /// What Microsoft Entra's refusal asks for: a setting of the app registration, consent, one resource.
    case answerEntraRefusal(EntraRefusal)
    /// Do the same again: the answer was refused for this attempt only (e.g. it may have come from
    /// another server).
    case tryAgain
    /// Do the same again later: the server failed or was busy for now, and did not judge the request.
    case tryAgainLater
    /// Register a client at the provider the way the preset called `preset` describes
    /// (`ProviderPreset.registration`), and give its client id.
    case registerClient(preset: String)
    /// Register a client at the authorization server with this issuer by hand, and give its
    /// client id: the server could not register one by itself.
    case registerClientAt(issuer: String)
    /// Sign in to the protected resource at this URL (starting from it), for these scopes when
    /// some are named (`nil`: the ones it asks for).
    case signInToResource(String, scopes: [String]?)
    /// Sign `account` in again so that its sign-in grants `target` — with `scopes` (the account's
    /// and the target's) — since the server gives it no other way.
    case signInForTarget(account: String, grant: AuthType?, target: TokenTarget, scopes: [String]?)

    /// Signing `credentials`' account in again, the way it was signed in — for an account bound to
    /// a protected resource, starting from the resource again.
    public static func signIn(_ credentials: OAuthCredentials) -> Remedy {
        if let resource = credentials.resource { return .signInToResource(resource, scopes: nil) }
        return .signIn(account: credentials.selectableName, grant: credentials.obtainedBy)
    }

    /// The remedy in words that name no tool.
    public var description: String {
        switch self {
        case .signIn(let account?, _): return "Sign in to \(account) again."
        case .signIn(nil, _): return "Sign in first."
        case .provideClientSecret: return "Provide the client secret so that the token can renew itself."
        case .chooseDefaultAccount: return "Choose the default account, or name one."
        case .allowKeyringStorage: return "Allow the keyring for storage again."
        case .useFileStorage: return "Unlock or start the keyring, or store refresh tokens in a file."
        case .removeDamagedAccount(let identifier): return "Remove the damaged record of \(identifier), then sign in again."
        case .useAnotherCredentialsDirectory: return "Or keep the credentials in another directory."
        case .chooseCallbackPort: return "Choose a fixed callback port (and register it with the server)."
        case .useAnotherCallbackPort:
            return "Stop the program that holds it, or sign in on another port (registering that redirect URI where the server matches it exactly)."
        case .giveDeviceAuthorizationEndpoint: return "Give the server's device authorization endpoint."
        case .askForScopes: return "Ask for scopes (for OpenID Connect, at least openid)."
        case .forgetLocally(let account): return "Forget \(account) on this machine only; its refresh token stays in the keyring."
        case .allowHost(let host): return "Allow the host \(host) explicitly if you trust it."
        case .answerSalesforceRefusal(let refusal): return refusal.nextStep
        case .answerEntraRefusal(let refusal): return refusal.nextStep
        case .tryAgain: return "Try again."
        case .tryAgainLater: return "Try again later."
        case .registerClient: return "Register a client at the provider and give its client id."
        case .registerClientAt(let issuer): return "Register a client at \(issuer) and give its client id."
        case .signInToResource(let resource, _): return "Sign in to \(resource) first."
        case .signInForTarget(let account, _, let target, _): return "Sign \(account) in again for \(target.summary)."
        }
    }
}
