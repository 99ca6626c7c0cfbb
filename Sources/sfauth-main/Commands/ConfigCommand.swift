import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth config`: shows the configuration `sfauth login` would use and where each value came from.
struct ConfigCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the configuration sfauth login would use, and where each value comes from.",
        discussion: """
            A dry run of sfauth login: it takes every option of sfauth login (see sfauth login --help) and \
            resolves them with the environment (SFAUTH_PRESET, SFAUTH_LOGIN_URL, \
            SFAUTH_ISSUER, SFAUTH_CLIENT_ID, SFAUTH_SCOPES, SFAUTH_USERNAME, SFAUTH_JWT_KEY_FILE), the chosen \
            profile of the configuration file and its preset, and prints every value with its source: \
            a flag, an environment variable, FILE:LINE, a preset, or sfauth's default. Makes no network \
            request: an issuer's endpoints are read from its metadata only when signing in. A required \
            value that is missing (a client id) is shown as a row with how to set it. A bad \
            configuration file exits with 2 and says where (FILE:LINE) and what is wrong.

            The configuration file ($SFAUTH_CONFIG, else $XDG_CONFIG_HOME/sfauth/config.toml):
              default_profile = "work"
              [profile.work]
              preset = "salesforce-mydomain"
              instance_url = "https://acme.my.salesforce.com"
              client_id = "3MVG9..."
              [profile.work.params]
              prompt = "consent"

            Examples:
              sfauth config
              sfauth config --profile work
              sfauth config --json | jq -r .settings.client_id.value
            """
    )

    // Every option of `sfauth login`, so that `config` is a true dry run of the same command line;
    // their help is `sfauth login --help`'s.
    @OptionGroup(visibility: .hidden)
    var provider: ProviderOptions

    @OptionGroup(visibility: .hidden)
    var grants: GrantOptions

    @OptionGroup(visibility: .hidden)
    var session: SessionOptions

    @Flag(help: "Print JSON: file, profile, settings and params, each value with its source.")
    var json = false

    func run(in context: CommandContext) throws {
        let request = SignInRequest(provider, grants, session)
        let loaded = try LoadedConfiguration.load(
            flags: request.flags, configPath: request.configPath, profileName: request.profile,
            settings: context.settings, reportingMissing: true)
        if let target = try SignInPlan.resourceTarget(request, stored: nil) {
            // The server and the client are found from the resource when signing in: the profile's
            // and the environment's server settings do not apply, and are not shown.
            let rows = resourceRows(target, request) + (try signInRows(request, loaded, context: context))
            print(json ? jsonText(loaded, signIn: rows, resolved: false) : table(loaded, signIn: rows, resolved: false))
            return
        }
        let signIn = try signInRows(request, loaded, context: context)
        print(json ? jsonText(loaded, signIn: signIn) : table(loaded, signIn: signIn))
        if !loaded.resolved.missing.isEmpty, request.resource == nil {
            StandardError.line(
                "sfauth login would stop here: \(loaded.resolved.missing.map(\.name).joined(separator: ", ")) \(loaded.resolved.missing.count == 1 ? "is" : "are") missing."
            )
        }
    }

    /// How `login` would sign in with these options: the grant, the stored account (`--account`),
    /// where the refresh token would go, the browser and the wait.
    private func signInRows(_ request: SignInRequest, _ loaded: LoadedConfiguration, context: CommandContext) throws(OAuthError)
        -> [(name: String, value: String, source: String)]
    {
        var rows: [(name: String, value: String, source: String)] = []
        if let flag = request.grant {
            rows.append(("grant", String(flag.rawValue.dropFirst(2)), "flag \(flag.rawValue)"))
        } else if let keyFile = loaded.resolved.jwtKeyFile {
            rows.append(("grant", "jwt-key-file", "\(keyFile.source)"))
        } else {
            rows.append(("grant", "browser", "default"))
        }
        if let account = request.account {
            rows.append(("account", account, "flag --account: signs in again with that account's own server and recipe"))
        }
        if request.force { rows.append(("force", "true", "flag --force: a fresh sign-in (prompt=login) to the default or --account account")) }
        if let storage = request.storage {
            rows.append(("storage", storage.rawValue, "flag --storage"))
        } else {
            let settings = context.settings
            rows.append(
                (
                    "storage", try settings.storageMode().rawValue,
                    settings.value("STORAGE").map { _ in "env \(settings.name("STORAGE"))" } ?? "default"
                ))
        }
        if request.noBrowser {
            rows.append(("browser", "(none: print the URL)", "flag --no-browser"))
        } else if let command = request.browserCommand {
            rows.append(("browser", command, "flag --browser-command"))
        } else if loaded.resolved.browser == nil {
            rows.append(("browser", "xdg-open", context.environment["BROWSER"].map { "default (xdg-open honours $BROWSER=\($0))" } ?? "default"))
        }
        if let timeout = request.timeout { rows.append(("timeout", "\(timeout)", "flag --timeout")) }
        if let alias = request.alias { rows.append(("alias", alias, "flag --alias")) }
        return rows
    }

    /// What `login --resource` would use: the resource, and for each of the server, the client and
    /// the scopes, the value given or where the sign-in will find it.
    private func resourceRows(_ target: ResourceTarget, _ request: SignInRequest) -> [(name: String, value: String, source: String)] {
        let client = SignInPlan.resourceClient(request, stored: nil, secret: nil)
        let given = { (key: ConfigurationKey) in request.flags[key].map { "\($0.source)" } }
        var rows: [(name: String, value: String, source: String)] = [("resource", target.resource, "flag --resource")]
        rows.append(
            target.issuer.map { ($0, given(.issuer) ?? "") }.map { ("issuer", $0.0, $0.1) }
                ?? ("issuer", "(the first the resource names)", "its metadata (RFC 9728), read when signing in"))
        if !client.clientId.isEmpty {
            rows.append(("client_id", client.clientId, given(.clientId) ?? "flag --client-id"))
        } else if let document = target.clientMetadataURL {
            rows.append(("client_id", document, "flag --client-metadata-url, where the server accepts such documents; else as below"))
        } else {
            rows.append(("client_id", "(registered)", "the registration kept for the server, else one made when signing in (RFC 7591)"))
        }
        rows.append(
            client.scopes.isEmpty
                ? ("scopes", "(the resource's)", "its challenge, else its metadata's scopes_supported")
                : ("scopes", client.scopes.joined(separator: " "), given(.scopes) ?? "flag --scope"))
        rows.append(("callback_host", client.redirect.host, given(.callbackHost) ?? "default"))
        rows.append(
            client.redirect.port == 0
                ? ("callback_port", "(registered)", "the registration's port, else a free one")
                : ("callback_port", "\(client.redirect.port)", given(.callbackPort) ?? "flag --port"))
        rows.append(("callback_path", client.redirect.path, given(.callbackPath) ?? "default"))
        for parameter in client.additionalAuthorizationParameters {
            rows.append(("params.\(parameter.name)", parameter.value, parameter.name == "login_hint" ? "flag --login-hint" : "flag --param"))
        }
        return rows
    }

    // MARK: - Table

    private func table(_ loaded: LoadedConfiguration, signIn: [(name: String, value: String, source: String)], resolved: Bool = true) -> String {
        var rows = [["KEY", "VALUE", "SOURCE"]]
        rows.append(["file", fileDescription(loaded), loaded.file.map { "\($0.source)" } ?? "default"])
        rows.append(["profile", loaded.profile?.value ?? "(none)", loaded.profile.map { "\($0.source)" } ?? "default"])
        for setting in resolved ? loaded.resolved.settings : [] {
            let value = setting.value == .words([]) ? "(none)" : setting.value.displayText
            rows.append([setting.name.terminalSafe, value.terminalSafe, "\(setting.source)".terminalSafe])
        }
        for missing in resolved ? loaded.resolved.missing : [] { rows.append([missing.name, "(missing)", missing.reason]) }
        for row in signIn { rows.append([row.name, row.value.terminalSafe, row.source.terminalSafe]) }
        let widths = (0..<2).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            (row[0].padding(toLength: widths[0]) + "  " + row[1].padding(toLength: widths[1]) + "  " + row[2]).trimmingTrailingSpaces()
        }.joined(separator: "\n")
    }

    private func fileDescription(_ loaded: LoadedConfiguration) -> String {
        guard let file = loaded.file else { return "(none: HOME is not set)" }
        return loaded.fileExists ? file.path : "\(file.path) (none)"
    }

    // MARK: - JSON

    /// `{"file": {"path", "exists", "source"}, "profile": {"name", "source"} | null,
    ///   "settings": {KEY: {"value", "source"}}, "params": {NAME: {"value", "source"}}}`
    private func jsonText(_ loaded: LoadedConfiguration, signIn: [(name: String, value: String, source: String)], resolved: Bool = true) -> String {
        var settings = [String: Entry]()
        var params = [String: Entry]()
        for setting in resolved ? loaded.resolved.settings : [] {
            let entry = Entry(value: Value(setting.value), source: "\(setting.source)")
            if setting.name.hasPrefix("params.") {
                params[String(setting.name.dropFirst("params.".count))] = entry
            } else {
                settings[setting.name] = entry
            }
        }
        for row in signIn {
            if row.name.hasPrefix("params.") {
                params[String(row.name.dropFirst("params.".count))] = Entry(value: Value(.text(row.value)), source: row.source)
            } else {
                settings[row.name] = Entry(value: Value(.text(row.value)), source: row.source)
            }
        }
        let report = Report(
            file: loaded.file.map { FileReport(path: $0.path, exists: loaded.fileExists, source: "\($0.source)") },
            profile: loaded.profile.map { ProfileReport(name: $0.value, source: "\($0.source)") },
            settings: settings, params: params,
            missing: (resolved ? loaded.resolved.missing : []).map { MissingReport(name: $0.name, reason: $0.reason) })
        return JSONOutput.render(report)
    }

    private struct Report: Encodable {
        let version = 1
        var file: FileReport?
        var profile: ProfileReport?
        var settings: [String: Entry]
        var params: [String: Entry]
        var missing: [MissingReport]

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(file, forKey: .file)  // null rather than absent
            try container.encode(profile, forKey: .profile)
            try container.encode(settings, forKey: .settings)
            try container.encode(params, forKey: .params)
            try container.encode(missing, forKey: .missing)
        }

        enum CodingKeys: String, CodingKey { case version, file, profile, settings, params, missing }
    }

    private struct MissingReport: Encodable {
        var name: String
        var reason: String
    }

    private struct FileReport: Encodable {
        var path: String
        var exists: Bool
        var source: String
    }

    private struct ProfileReport: Encodable {
        var name: String
        var source: String
    }

    private struct Entry: Encodable {
        var value: Value
        var source: String
    }

    /// A setting's value as JSON: a string, a number (ports) or an array of strings (scopes).
    private struct Value: Encodable {
        var setting: SettingValue

        init(_ setting: SettingValue) { self.setting = setting }

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch setting {
            case .text(let text): try container.encode(text)
            case .port(let port): try container.encode(port)
            case .words(let words): try container.encode(words)
            }
        }
    }
}
