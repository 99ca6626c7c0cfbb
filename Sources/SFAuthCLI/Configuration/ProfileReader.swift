import SFAuth
/// Turns the entries of a profile table (a user's `[profile.NAME]`, or a whole preset file) into a
/// `ConfigurationLayer`, checking each value's type where it was written.
struct ProfileReader {
    /// The file, for messages.
    var path: String
    /// Keys besides the profile keys that this kind of table accepts (a preset's `description`).
    var extraKeys: [String] = []
    /// Where a value on a given line came from.
    var source: (_ line: Int, _ table: String) -> ConfigurationSource

    /// The layer for `table`'s entries and the parameters of `parameters`; the entries with
    /// `extraKeys` are returned untouched.
    func read(_ table: ConfigurationDocument.Table, parameters: ConfigurationDocument.Table?) throws(OAuthError)
        -> (layer: ConfigurationLayer, extras: [String: ConfigurationDocument.Entry]) {
        var layer = ConfigurationLayer()
        var extras = [String: ConfigurationDocument.Entry]()
        let tableName = table.displayName
        for entry in table.entries {
            if extraKeys.contains(entry.key) {
                extras[entry.key] = entry
                continue
            }
            guard let key = ConfigurationKey(rawValue: entry.key) else {
                let place = tableName.isEmpty ? "" : " in [\(tableName)]"
                let known = (ConfigurationKey.allCases.map(\.rawValue) + extraKeys).joined(separator: ", ")
                throw failure("unknown key '\(entry.key)'\(place); known keys: \(known)", line: entry.line)
            }
            layer.set(key, try value(of: entry, as: key), from: source(entry.line, tableName))
        }
        if let parameters {
            for entry in parameters.entries {
                guard case .string(let value) = entry.value else {
                    throw failure("the parameter '\(entry.key)' in [\(parameters.displayName)] must be a string, not \(entry.value.typeDescription)",
                                  line: entry.line)
                }
                guard !entry.key.isEmpty else { throw failure("a parameter in [\(parameters.displayName)] has an empty name", line: entry.line) }
                layer.addParameter(name: entry.key, value: value, from: source(entry.line, parameters.displayName))
            }
        }
        return (layer, extras)
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
            throw failure("\(key.rawValue) must be an array of strings, the command and its arguments, not \(entry.value.typeDescription)",
                          line: entry.line)
        case (.words, _):
            throw failure("\(key.rawValue) must be an array of strings or a space-separated string, not \(entry.value.typeDescription)",
                          line: entry.line)
        }
    }

    private func failure(_ message: String, line: Int) -> OAuthError {
        .configuration("\(path):\(line): \(message)")
    }
}
