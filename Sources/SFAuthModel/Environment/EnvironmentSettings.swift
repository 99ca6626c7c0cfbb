/// The settings a tool lets its users give through environment variables, all named
/// `<PREFIX>_<SETTING>`: sfauth reads `SFAUTH_HOME`, `SFAUTH_TOKEN_LEEWAY`…; a tool embedding
/// SFAuth may offer the same under its own prefix (`ACME_HOME`…), or none at all. The library never
/// reads them by itself: a tool builds this from its environment and passes the values on.
///
/// Each setting is read when asked for, and only a malformed one throws, so a command fails only on
/// the variables it actually uses.
public struct EnvironmentSettings: Sendable {
    /// The variables' prefix without the underscore: `SFAUTH`.
    public let prefix: String
    /// The process environment.
    public let environment: [String: String]

    /// Reads settings named `<prefix>_…` from `environment`.
    public init(prefix: String, environment: [String: String]) {
        self.prefix = prefix
        self.environment = environment
    }

    /// Reads the settings of `app` (`<app's environment prefix>_…`: `SFAUTH_HOME` for sfauth) from
    /// `environment`.
    public init(app: AppIdentity, environment: [String: String]) {
        self.init(prefix: app.environmentPrefix, environment: environment)
    }

    /// The variable's full name: `name("HOME")` is `SFAUTH_HOME`.
    public func name(_ setting: String) -> String { prefix + "_" + setting }

    /// A variable's value; unset and empty are the same.
    public func value(_ setting: String) -> String? {
        guard let value = environment[name(setting)], !value.isEmpty else { return nil }
        return value
    }

    /// `<PREFIX>_HOME`: the credentials directory, when it is overridden.
    ///
    /// - Throws: `.configuration` for a relative path (it would name another directory in every
    ///   working directory).
    public func credentialsDirectoryOverride() throws(OAuthError) -> String? {
        guard let path = value("HOME") else { return nil }
        guard path.hasPrefix("/") else {
            let shown = TerminalText.escaped(path)
            throw .configuration("\(name("HOME")) must be an absolute path, not '\(shown)'; for example \(name("HOME"))=\"$PWD/\(shown)\"")
        }
        return path
    }

    /// The credentials directory of `app`: `<PREFIX>_HOME` when set, else the XDG location.
    public func credentialsDirectory(app: AppIdentity) throws(OAuthError) -> String {
        if let override = try credentialsDirectoryOverride() { return override }
        do { return try StoreLocation.credentialsDirectory(app: app, environment: environment) } catch {
            throw .configuration(
                "neither \(name("HOME")), XDG_DATA_HOME nor HOME is set to an absolute path; set \(name("HOME")) to the directory for credentials")
        }
    }

    /// `<PREFIX>_STORAGE`: where new refresh tokens go; `.auto` when unset.
    public func storageMode() throws(OAuthError) -> StorageMode {
        guard let text = value("STORAGE") else { return .auto }
        guard let mode = StorageMode(rawValue: text) else {
            throw .configuration("\(name("STORAGE")) must be auto, keyring or file, not '\(TerminalText.escaped(text))'")
        }
        return mode
    }

    /// `<PREFIX>_TOKEN_LEEWAY`: seconds before the expiry at which tokens are refreshed.
    public func tokenLeeway() throws(OAuthError) -> Double? { try seconds("TOKEN_LEEWAY") }

    /// `<PREFIX>_ASSUMED_TOKEN_LIFETIME`: how long tokens live when the server does not say.
    public func assumedTokenLifetime() throws(OAuthError) -> Double? { try seconds("ASSUMED_TOKEN_LIFETIME") }

    /// `<PREFIX>_CLIENT_SECRET`: the client secret, never stored.
    public var clientSecret: String? { value("CLIENT_SECRET") }

    /// `<PREFIX>_HTTP_TIMEOUT`: seconds for a whole HTTP request, 0 < t ≤ 3600.
    public func httpTimeout() throws(OAuthError) -> Double? {
        guard let text = value("HTTP_TIMEOUT") else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 3600 else {
            throw .configuration("\(name("HTTP_TIMEOUT")) must be a number of seconds between 0 and 3600, not '\(TerminalText.escaped(text))'")
        }
        return seconds
    }

    /// An access token supplied through the environment (`<PREFIX>_ACCESS_TOKEN`, with
    /// `<PREFIX>_INSTANCE_URL`), for CI and tests: it wins over anything stored.
    public var suppliedToken: SuppliedToken? {
        guard let token = value("ACCESS_TOKEN") else { return nil }
        return SuppliedToken(accessToken: token, instanceURL: value("INSTANCE_URL"))
    }

    /// The variables that hold secrets, which child processes (the browser) must not inherit.
    public var secretVariables: [String] { [name("CLIENT_SECRET"), name("ACCESS_TOKEN")] }

    private func seconds(_ setting: String) throws(OAuthError) -> Double? {
        guard let text = environment[name(setting)] else { return nil }
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
            throw .configuration("\(name(setting)) must be a number of seconds, not '\(TerminalText.escaped(text))'")
        }
        return seconds
    }
}

/// An access token given from outside (the environment) instead of a stored account's.
public struct SuppliedToken: Sendable, Equatable {
    /// The token.
    public let accessToken: String
    /// Where API calls go (Salesforce `instance_url`), when given.
    public let instanceURL: String?

    /// Creates a supplied token.
    public init(accessToken: String, instanceURL: String?) {
        self.accessToken = accessToken
        self.instanceURL = instanceURL
    }
}

/// Where new refresh tokens are kept.
public enum StorageMode: String, Sendable, CaseIterable {
    /// The Secret Service keyring when one answers, else the 0600 files (and the user is told). Default.
    case auto
    /// The keyring, or fail.
    case keyring
    /// The 0600 files only.
    case file
}
