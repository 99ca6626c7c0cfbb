import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `sfauth config`: shows the configuration `sfauth login` would use and where each value came from.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the configuration sfauth login would use, and where each value comes from.",
        discussion: """
            Resolves the same flags as sfauth login with the environment (SFAUTH_PRESET, SFAUTH_LOGIN_URL, \
            SFAUTH_ISSUER, SFAUTH_CLIENT_ID, SFAUTH_SCOPES, SFAUTH_USERNAME, SFAUTH_JWT_KEY_FILE), the chosen \
            profile of the configuration file and its preset, and prints every value with its source: \
            a flag, an environment variable, FILE:LINE, a preset, or sfauth's default. Makes no network \
            request: an issuer's endpoints are read from its metadata only when signing in. A bad \
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

    @OptionGroup(title: "Server and client")
    var provider: ProviderOptions

    @Flag(help: "Print JSON: file, profile, settings and params, each value with its source.")
    var json = false

    func run() throws {
        let loaded: LoadedConfiguration
        do throws(OAuthError) {
            loaded = try provider.load(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw CommandFailure(error)
        }
        print(json ? jsonText(loaded) : table(loaded))
    }

    // MARK: - Table

    private func table(_ loaded: LoadedConfiguration) -> String {
        var rows = [["KEY", "VALUE", "SOURCE"]]
        rows.append(["file", fileDescription(loaded), loaded.file.map { "\($0.source)" } ?? "default"])
        rows.append(["profile", loaded.profile?.value ?? "(none)", loaded.profile.map { "\($0.source)" } ?? "default"])
        for setting in loaded.resolved.settings {
            let value = setting.value == .words([]) ? "(none)" : setting.value.displayText
            rows.append([setting.name.terminalSafe, value.terminalSafe, "\(setting.source)".terminalSafe])
        }
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
    private func jsonText(_ loaded: LoadedConfiguration) -> String {
        var settings = [String: Entry]()
        var params = [String: Entry]()
        for setting in loaded.resolved.settings {
            let entry = Entry(value: Value(setting.value), source: "\(setting.source)")
            if setting.name.hasPrefix("params.") { params[String(setting.name.dropFirst("params.".count))] = entry } else { settings[setting.name] = entry }
        }
        let report = Report(
            file: loaded.file.map { FileReport(path: $0.path, exists: loaded.fileExists, source: "\($0.source)") },
            profile: loaded.profile.map { ProfileReport(name: $0.value, source: "\($0.source)") },
            settings: settings, params: params)
        return JSONOutput.render(report)
    }

    private struct Report: Encodable {
        let version = 1
        var file: FileReport?
        var profile: ProfileReport?
        var settings: [String: Entry]
        var params: [String: Entry]

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(file, forKey: .file)          // null rather than absent
            try container.encode(profile, forKey: .profile)
            try container.encode(settings, forKey: .settings)
            try container.encode(params, forKey: .params)
        }

        enum CodingKeys: String, CodingKey { case version, file, profile, settings, params }
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
