import SFAuth
import SFAuthCLI
import Glibc

/// What every command that hands out a token shares (`token`, `exec`, `request`, `export`,
/// `kube-credential`, `git-credential`): the same store, token source and environment options,
/// the same account lookup, and the same one-line failures.
enum AccountTokens {
    /// The store and a token source as `SFAUTH_STORAGE`, `SFAUTH_TOKEN_LEEWAY`,
    /// `SFAUTH_ASSUMED_TOKEN_LIFETIME`, `SFAUTH_CLIENT_SECRET` and `SFAUTH_HTTP_TIMEOUT` say.
    static func source(environment: [String: String]) throws(OAuthError) -> (store: FileCredentialStore, source: TokenSource) {
        let store = try StoreSetup.existingAccounts(environment: environment)
        return (store, TokenSource(store: store, httpClient: try HTTPSettings.client(environment: environment),
                                   options: try TokenSource.Options(settings: SFAuthEnvironment.settings(environment))))
    }

    /// The identifier `name` selects (`nil`: the default account).
    static func identifier(_ name: String?, in store: FileCredentialStore) throws(OAuthError) -> String? {
        guard let name else { return nil }
        return try AccountResolver(store: store).identifier(for: name)
    }

    /// The stored credentials of `identifier` (`nil`: the default account), if any.
    static func stored(_ identifier: String?, in store: FileCredentialStore) throws(OAuthError) -> OAuthCredentials? {
        if let identifier { return try store.load(identifier: identifier) }
        return try store.loadDefault()
    }

    /// Writes `sfauth: <message>` as one line on stderr and returns the status for `error`.
    static func fail(_ error: OAuthError, context: String? = nil) -> ExitStatus {
        let text = TerminalText.escaped(SFAuthWords.message(for: error))
        StandardError.line("sfauth: \(context.map { "\($0): " } ?? "")\(SFAuthCommand.sentence(text))")
        return ExitStatus(error)
    }

    /// The absolute path of the `sfauth` people run — what kubeconfig and git configuration should
    /// call: the front end passes its own path as the first argument when it hands a command over;
    /// run directly, this program's own file (`/proc/self/exe`); else `sfauth`.
    static var executablePath: String {
        if let first = CommandLine.arguments.first, first.hasPrefix("/"), access(first, X_OK) == 0 { return first }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard count > 0 else { return "sfauth" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
