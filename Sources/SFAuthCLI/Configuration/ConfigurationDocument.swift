import SFAuth
/// A configuration file as written, before its keys mean anything: tables of `key = value` entries,
/// each with its line, as read by `ConfigurationParser` (a small subset of TOML 1.0).
package struct ConfigurationDocument: Sendable, Equatable {
    /// The file's path, as given (used in every message about it).
    package var path: String
    /// The top-level entries (before any table header), as a table with an empty name.
    package var root: Table
    /// The `[tables]` in the order they appear.
    package var tables: [Table]

    /// One `[table]` and its entries.
    package struct Table: Sendable, Equatable {
        /// The dotted name split into keys: `[profile.work]` is `["profile", "work"]`; `[]` for the top level.
        package var name: [String]
        /// The line of the table header; 0 for the top level.
        package var line: Int
        /// The `key = value` entries in order.
        package var entries: [Entry]

        /// The name as written in messages: `profile.work`, with keys quoted where a bare key could not
        /// spell them (`profile."my work"`).
        package var displayName: String {
            name.map { key in
                key.unicodeScalars.allSatisfy(ConfigurationParser.isBareKeyCharacter) && !key.isEmpty ? key : "\"\(key)\""
            }.joined(separator: ".")
        }
    }

    /// One `key = value` line.
    package struct Entry: Sendable, Equatable {
        /// The key.
        package var key: String
        /// The value.
        package var value: ConfigurationValue
        /// The line the entry starts on (1-based).
        package var line: Int
    }

    /// The table named `name`, if the document has one.
    package func table(_ name: [String]) -> Table? {
        name.isEmpty ? root : tables.first { $0.name == name }
    }
}

/// A value in a configuration file: the TOML types sfauth accepts.
package enum ConfigurationValue: Sendable, Equatable {
    /// A basic (`"…"`) or literal (`'…'`) string.
    case string(String)
    /// A decimal integer.
    case integer(Int)
    /// `true` or `false`.
    case boolean(Bool)
    /// An array of strings.
    case strings([String])

    /// The type as said in messages: "a string", "an integer", "a boolean", "an array".
    package var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .boolean: return "a boolean"
        case .strings: return "an array"
        }
    }
}
