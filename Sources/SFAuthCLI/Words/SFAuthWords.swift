import SFAuth

/// What helps after an error, in sfauth's own words: its commands, flags and variables. The library
/// says what happened and names the remedy as a value (`Remedy`); only the command knows it is
/// called `sfauth`.
package enum SFAuthWords {
    /// One line for `error`, its remedy said the sfauth way.
    package static func message(for error: OAuthError) -> String {
        error.description(advising: advice(for:))
    }

    /// The remedy as one or two sentences.
    package static func advice(for remedy: Remedy) -> String {
        switch remedy {
        case .signIn(nil, _):
            return "Run `sfauth login` first."
        case .signIn(let account?, let grant):
            return "Run `\(signInCommand(account: account, grant: grant))` to sign in again."
        case .provideClientSecret(let account):
            let again = account.map { ", or run `\(signInCommand(account: $0, grant: .clientCredentials))`" } ?? ""
            return "Set \(variable("CLIENT_SECRET")) to let it renew itself\(again)."
        case .chooseDefaultAccount:
            return "Choose one with `sfauth use NAME` (`sfauth accounts` lists them), or name it with --account NAME."
        case .allowKeyringStorage:
            return "Unset \(variable("STORAGE")) or set it to auto or keyring."
        case .useFileStorage:
            return "Unlock or start the keyring, or use --storage file."
        case .removeDamagedAccount(let identifier):
            return "Move it away (or remove it with `sfauth logout --local-only \(quoted(identifier))`) and sign in again."
        case .useAnotherCredentialsDirectory:
            return "Or point \(variable("HOME")) at a directory of your own."
        case .chooseCallbackPort:
            return "Or choose a fixed port with --port (and register it)."
        case .useAnotherCallbackPort:
            return "Stop the program that holds it, or use another --port (and register that redirect URI where the server matches it exactly), "
                + "or leave out --port where the server takes any loopback port."
        case .answerSalesforceRefusal(let refusal):
            return salesforceNextStep(refusal)
        case .answerEntraRefusal(let refusal):
            return refusal.nextStep
        case .allowHost(let host):
            return "Add --allow-host \(host) if you trust it."
        case .registerClient:
            return "Register one as follows, then give --client-id (or client_id in the profile):"
        case .registerClientAt(let issuer):
            return "Register a client at \(issuer) yourself (redirect URI http://127.0.0.1:PORT/callback) and give --client-id and --port."
        case .signInToResource(let resource, let scopes):
            return "Run `\(resourceSignInCommand(resource, scopes: scopes))`."
        case .signInForTarget(let account, let grant, let target, let scopes):
            return "Run `\(targetSignInCommand(account: account, grant: grant, target: target, scopes: scopes))` to sign in for it."
        case .tryAgain, .tryAgainLater:
            return remedy.description
        case .forgetLocally(let account):
            return
                "`sfauth logout --local-only \(quoted(account))` removes it from this machine (its refresh token stays in the keyring until that can be reached)."
        case .askForScopes:
            return "Give --scope (for OpenID Connect, at least --scope openid)."
        case .giveDeviceAuthorizationEndpoint:
            return "Give it with --device-authorization-url, or use a server that supports the device grant."
        }
    }

    /// Salesforce's refusals, answered with sfauth's flags.
    private static func salesforceNextStep(_ refusal: SalesforceRefusal) -> String {
        switch refusal {
        case .appBlocked:
            return
                "The connected app is blocked in this org: an administrator can unblock it (Setup, Connected Apps OAuth Usage), or sign in with your own connected app (--client-id)."
        case .userNotApproved:
            return
                "The connected app only admits users an administrator approved: ask one to add your profile or permission set to it (Manage Connected Apps, Permitted Users), or use another app (--client-id)."
        case .callbackNotRegistered:
            return
                "The connected app does not list this callback: register it exactly (e.g. http://localhost:1717/OauthRedirect), or pass the --port and --callback-path that are registered."
        case .unknownClientId:
            return "The org knows no connected app with this client id (a new app needs up to ten minutes to be usable): check --client-id."
        }
    }

    /// The command that signs an account in again the way it was signed in
    /// (`sfauth login --account NAME` replays the account's recipe).
    package static func signInCommand(account: String, grant: AuthType?) -> String {
        let secret = grant == .clientCredentials ? "\(variable("CLIENT_SECRET"))=… " : ""
        return "\(secret)sfauth login --account \(quoted(account))"
    }

    /// The command that signs in to a protected resource, for `scopes` when given.
    package static func resourceSignInCommand(_ resource: String, scopes: [String]?) -> String {
        let scope = scopes.map { " --scope \(quoted($0.joined(separator: " ")))" } ?? ""
        return "sfauth login --resource \(quoted(resource))\(scope)"
    }

    /// The command whose sign-in grants a per-call target: a protected resource's own sign-in for a
    /// resource; else the account's, with the scopes and the audience (as the authorization
    /// request's `audience`, which Auth0 and others read) asked for.
    package static func targetSignInCommand(account: String, grant: AuthType?, target: TokenTarget, scopes: [String]?) -> String {
        if let resource = target.resource, target.audience == nil { return resourceSignInCommand(resource, scopes: target.scopes) }
        var command = signInCommand(account: account, grant: grant)
        if let scopes, !scopes.isEmpty { command += " --scope \(quoted(scopes.joined(separator: " ")))" }
        if let audience = target.audience { command += " --param \(quoted("audience=" + audience))" }
        return command
    }

    /// The command that signs `credentials`' account in again.
    package static func signInCommand(for credentials: OAuthCredentials) -> String {
        signInCommand(account: credentials.selectableName, grant: credentials.obtainedBy)
    }

    /// One of sfauth's environment variables: `SFAUTH_` and `setting`.
    private static func variable(_ setting: String) -> String {
        AppIdentity.sfauth.variable(setting)
    }

    /// `name` as a shell word: as it is when it is plain, else in single quotes.
    private static func quoted(_ name: String) -> String {
        name.allSatisfy { $0.isLetter || $0.isNumber || "-_.@:/".contains($0) } ? name : "'\(name)'"
    }
}
