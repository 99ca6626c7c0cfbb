import SFAuth

/// Where a configuration value came from, so `sfauth config` and error messages can say so.
///
/// From highest to lowest precedence: a command-line flag, an environment variable, the user's
/// configuration file, a built-in preset, sfauth's own default.
package enum ConfigurationSource: Sendable, Equatable, Hashable {
    /// A command-line flag, e.g. `--client-id`.
    case flag(String)
    /// An environment variable, e.g. `SFAUTH_CLIENT_ID`.
    case environment(String)
    /// A line of a configuration file, in a table (`profile.work`) or at the top level (`""`).
    case file(path: String, line: Int, table: String)
    /// A built-in preset, e.g. `salesforce`.
    case preset(String)
    /// sfauth's own default.
    case builtIn

    /// Whether this source is a file, so errors can lead with `FILE:LINE:`.
    package var fileLocation: (path: String, line: Int)? {
        if case .file(let path, let line, _) = self { return (path, line) }
        return nil
    }
}

extension ConfigurationSource: CustomStringConvertible {
    /// `flag --client-id`, `env SFAUTH_CLIENT_ID`, `/home/me/.config/sfauth/config.toml:12 [profile.work]`,
    /// `preset salesforce` or `default`.
    package var description: String {
        switch self {
        case .flag(let name): return "flag \(name)"
        case .environment(let name): return "env \(name)"
        case .file(let path, let line, let table): return table.isEmpty ? "\(path):\(line)" : "\(path):\(line) [\(table)]"
        case .preset(let name): return "preset \(name)"
        case .builtIn: return "default"
        }
    }
}

/// A configuration value together with where it came from.
package struct Sourced<Value: Sendable>: Sendable {
    /// The value.
    package var value: Value
    /// Where it came from.
    package var source: ConfigurationSource

    /// Creates a sourced value.
    package init(_ value: Value, from source: ConfigurationSource) {
        self.value = value
        self.source = source
    }
}

extension Sourced: Equatable where Value: Equatable {}
