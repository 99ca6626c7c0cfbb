import SFAuth

/// The user's configuration file: named profiles and which one is the default.
///
/// ```toml
/// default_profile = "work"
///
/// [profile.work]
/// preset = "salesforce-mydomain"
/// instance_url = "https://acme.my.salesforce.com"
/// client_id = "3MVG9…"
///
/// [profile.work.params]
/// prompt = "consent"
/// ```
package struct ConfigurationFile: Sendable, Equatable {
    /// The file's path.
    package var path: String
    /// `default_profile`: the profile used when none is chosen, when set.
    package var defaultProfile: Sourced<String>?
    /// The profiles by name.
    package var profiles: [String: ConfigurationLayer]
    /// The profile names in the order the file defines them.
    package var profileNames: [String]

    /// Reads the contents `text` of the file at `path`.
    ///
    /// - Throws: `OAuthError.configuration("PATH:LINE: …")` for a syntax error, an unknown table or
    ///   key, a value of the wrong type, or a `default_profile` that names no profile.
    package static func parse(_ text: String, path: String) throws(OAuthError) -> ConfigurationFile {
        let document = try ConfigurationParser.parse(text, path: path)
        func failure(_ message: String, line: Int) -> OAuthError { .configuration("\(path):\(line): \(message)") }

        var defaultProfile: Sourced<String>?
        for entry in document.root.entries {
            guard entry.key == "default_profile" else {
                throw failure(
                    "unknown key '\(entry.key)' at the top level; known keys: default_profile (profile settings go in a [profile.NAME] table)",
                    line: entry.line)
            }
            guard case .string(let name) = entry.value, !name.isEmpty else {
                throw failure("default_profile must be the name of a profile, as a string", line: entry.line)
            }
            defaultProfile = Sourced(name, from: .file(path: path, line: entry.line, table: ""))
        }

        var names = [String]()
        var tablesOfProfile = [String: (profile: ConfigurationDocument.Table?, parameters: ConfigurationDocument.Table?)]()
        for table in document.tables {
            switch table.name.count {
            case 1 where table.name[0] == "profile":
                if let entry = table.entries.first {
                    throw failure("[profile] holds no keys; put '\(entry.key)' in a [profile.NAME] table", line: entry.line)
                }
                continue
            case 2 where table.name[0] == "profile":
                tablesOfProfile[table.name[1], default: (nil, nil)].profile = table
            case 3 where table.name[0] == "profile" && table.name[2] == "params":
                tablesOfProfile[table.name[1], default: (nil, nil)].parameters = table
            default:
                throw failure("unknown table [\(table.displayName)]; known tables: [profile.NAME] and [profile.NAME.params]", line: table.line)
            }
            if !names.contains(table.name[1]) {
                guard !table.name[1].isEmpty else { throw failure("a profile name cannot be empty", line: table.line) }
                names.append(table.name[1])
            }
        }

        var profiles = [String: ConfigurationLayer]()
        for name in names {
            let tables = tablesOfProfile[name]!
            let profileTable = tables.profile ?? ConfigurationDocument.Table(name: ["profile", name], line: 0, entries: [])
            profiles[name] = try ProfileReader(path: path).read(profileTable, parameters: tables.parameters)
        }

        if let defaultProfile, profiles[defaultProfile.value] == nil, case .file(_, let line, _) = defaultProfile.source {
            throw failure("default_profile '\(defaultProfile.value)' names no profile; \(Self.knownProfiles(names))", line: line)
        }
        return ConfigurationFile(path: path, defaultProfile: defaultProfile, profiles: profiles, profileNames: names)
    }

    /// The profile named by `name` (from `--profile`, `SFAUTH_PROFILE` or `default_profile`).
    ///
    /// - Throws: `OAuthError.configuration` naming the known profiles when there is none by that name.
    package func profile(_ name: Sourced<String>) throws(OAuthError) -> ConfigurationLayer {
        guard let profile = profiles[name.value] else {
            throw .configuration("\(name.source): no profile '\(name.value)' in \(path); \(Self.knownProfiles(profileNames))")
        }
        return profile
    }

    /// `known profiles: a, b` or `it defines no profiles`.
    static func knownProfiles(_ names: [String]) -> String {
        names.isEmpty ? "it defines no profiles" : "known profiles: " + names.joined(separator: ", ")
    }
}

/// Turns the entries of a `[profile.NAME]` table into a `ConfigurationLayer`, checking each
/// value's type where it was written.
private struct ProfileReader {
    /// The file, for messages.
    var path: String

    /// Where a value on `line` of `table` came from.
    func source(_ line: Int, _ table: String) -> ConfigurationSource {
        .file(path: path, line: line, table: table)
    }

    /// The layer for `table`'s entries and the parameters of `parameters`.
    func read(_ table: ConfigurationDocument.Table, parameters: ConfigurationDocument.Table?) throws(OAuthError) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        let tableName = table.displayName
        for entry in table.entries {
            guard let key = ConfigurationKey(rawValue: entry.key) else {
                let place = tableName.isEmpty ? "" : " in [\(tableName)]"
                let meant =
                    Spelling.suggestion(for: entry.key, among: ConfigurationKey.allCases.map(\.rawValue)).map { " did you mean '\($0)'?" } ?? ""
                throw failure("unknown key '\(entry.key)'\(place);\(meant) known keys: \(ConfigurationKey.allNames)", line: entry.line)
            }
            layer.set(key, try value(of: entry, as: key), from: source(entry.line, tableName))
        }
        if let parameters {
            for entry in parameters.entries {
                guard case .string(let value) = entry.value else {
                    throw failure(
                        "the parameter '\(entry.key)' in [\(parameters.displayName)] must be a string, not \(entry.value.typeDescription)",
                        line: entry.line)
                }
                guard !entry.key.isEmpty else { throw failure("a parameter in [\(parameters.displayName)] has an empty name", line: entry.line) }
                layer.addParameter(name: entry.key, value: value, from: source(entry.line, parameters.displayName))
            }
        }
        return layer
    }

    /// The entry's value as the key's kind.
    private func value(of entry: ConfigurationDocument.Entry, as key: ConfigurationKey) throws(OAuthError) -> SettingValue {
        switch (key.kind, entry.value) {
        case (.text, .string(let text)):
            guard !text.allSatisfy(\.isWhitespace) else { throw failure("\(key.rawValue) is empty", line: entry.line) }
            return .text(text)
        case (.port, .integer(let number)):
            guard let port = UInt16(exactly: number) else {
                throw failure("\(key.rawValue) must be a port number from 0 to 65535, not \(number)", line: entry.line)
            }
            return .port(port)
        case (.words, .string(let text)):
            return .words(SettingValue.splitWords(text))
        case (.words, .strings(let words)):
            if let bad = words.first(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
                throw failure("\(key.rawValue): '\(bad)' is not one scope; give each scope as its own string", line: entry.line)
            }
            return .words(words)
        case (.text, _):
            throw failure("\(key.rawValue) must be a string, not \(entry.value.typeDescription)", line: entry.line)
        case (.port, _):
            throw failure("\(key.rawValue) must be a port number (an integer without quotes), not \(entry.value.typeDescription)", line: entry.line)
        case (.arguments, .strings(let arguments)):
            guard let program = arguments.first, !program.isEmpty else {
                throw failure("\(key.rawValue) must name a command first, e.g. [\"google-chrome\", \"--profile-directory=Work\"]", line: entry.line)
            }
            return .words(arguments)
        case (.arguments, _):
            throw failure(
                "\(key.rawValue) must be an array of strings, the command and its arguments, not \(entry.value.typeDescription)",
                line: entry.line)
        case (.words, _):
            throw failure(
                "\(key.rawValue) must be an array of strings or a space-separated string, not \(entry.value.typeDescription)",
                line: entry.line)
        }
    }

    private func failure(_ message: String, line: Int) -> OAuthError {
        .configuration("\(path):\(line): \(message)")
    }
}
