/// A configuration file as written, before its keys mean anything: tables of `key = value` entries,
/// each with its line, as read by `ConfigurationParser` (a small subset of TOML 1.0).
public struct ConfigurationDocument: Sendable, Equatable {
    /// The file's path, as given (used in every message about it).
    public var path: String
    /// The top-level entries (before any table header), as a table with an empty name.
    public var root: Table
    /// The `[tables]` in the order they appear.
    public var tables: [Table]

    /// One `[table]` and its entries.
    public struct Table: Sendable, Equatable {
        /// The dotted name split into keys: `[profile.work]` is `["profile", "work"]`; `[]` for the top level.
        public var name: [String]
        /// The line of the table header; 0 for the top level.
        public var line: Int
        /// The `key = value` entries in order.
        public var entries: [Entry]

        /// The name as written in messages: `profile.work`, with keys quoted where a bare key could not
        /// spell them (`profile."my work"`).
        public var displayName: String {
            name.map { key in
                key.unicodeScalars.allSatisfy(ConfigurationParser.isBareKeyCharacter) && !key.isEmpty ? key : "\"\(key)\""
            }.joined(separator: ".")
        }
    }

    /// One `key = value` line.
    public struct Entry: Sendable, Equatable {
        /// The key.
        public var key: String
        /// The value.
        public var value: ConfigurationValue
        /// The line the entry starts on (1-based).
        public var line: Int
    }

    /// The table named `name`, if the document has one.
    public func table(_ name: [String]) -> Table? {
        name.isEmpty ? root : tables.first { $0.name == name }
    }
}

/// A value in a configuration file: the TOML types sfauth accepts.
public enum ConfigurationValue: Sendable, Equatable {
    /// A basic (`"…"`) or literal (`'…'`) string.
    case string(String)
    /// A decimal integer.
    case integer(Int)
    /// `true` or `false`.
    case boolean(Bool)
    /// An array of strings.
    case strings([String])

    /// The type as said in messages: "a string", "an integer", "a boolean", "an array".
    public var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .boolean: return "a boolean"
        case .strings: return "an array"
        }
    }
}
