import SFAuth

/// The settings one place gives — the command line, the environment, a profile of the configuration
/// file, or a preset — each with where it came from. `ConfigurationResolver` stacks layers.
package struct ConfigurationLayer: Sendable, Equatable {
    /// The keys this layer sets.
    package private(set) var values: [ConfigurationKey: Sourced<SettingValue>] = [:]
    /// Extra authorization parameters, in order; a later one with the same name replaces an earlier one.
    package private(set) var parameters: [Sourced<AuthorizationParameter>] = []

    /// Creates an empty layer.
    package init() {}

    /// The value of `key` in this layer.
    package subscript(key: ConfigurationKey) -> Sourced<SettingValue>? { values[key] }

    /// Sets `key`; a value of the wrong kind for the key is a programming error.
    package mutating func set(_ key: ConfigurationKey, _ value: SettingValue, from source: ConfigurationSource) {
        // An argument list is held as words (each one as it is, spaces included).
        precondition(
            value.kind == key.kind || (key.kind == .arguments && value.kind == .words),
            "\(key.rawValue) holds \(key.kind), not \(value.kind)")
        values[key] = Sourced(value, from: source)
    }

    /// Adds an authorization parameter; one with the same name is replaced in place (RFC 6749 §3.1:
    /// a parameter must not be sent twice).
    package mutating func addParameter(name: String, value: String, from source: ConfigurationSource) {
        let parameter = Sourced(AuthorizationParameter(name: name, value: value), from: source)
        guard let index = parameters.firstIndex(where: { $0.value.name == name }) else {
            parameters.append(parameter)
            return
        }
        if parameters[index].source == source {
            // Repeated where it was given (`--param resource=A --param resource=B`): RFC 8707 asks for
            // several resources by repeating the parameter, so every value is kept, in order.
            let last = parameters.lastIndex(where: { $0.value.name == name }) ?? index
            parameters.insert(parameter, at: last + 1)
        } else {
            // A higher layer's value replaces every value of a lower one, in place of the first.
            parameters.removeAll { $0.value.name == name && $0.source != source }
            parameters.insert(parameter, at: min(index, parameters.count))
        }
    }

    /// The layer of the `SFAUTH_*` variables among `settings` (see `ConfigurationKey.environmentSetting`).
    /// An empty variable counts as unset; scopes are split at spaces.
    package static func environment(_ settings: EnvironmentSettings) -> ConfigurationLayer {
        var layer = ConfigurationLayer()
        for key in ConfigurationKey.allCases {
            guard let setting = key.environmentSetting, let text = settings.value(setting),
                !text.allSatisfy(\.isWhitespace)
            else { continue }
            let variable = settings.name(setting)
            switch key.kind {
            case .words: layer.set(key, .words(SettingValue.splitWords(text)), from: .environment(variable))
            case .text: layer.set(key, .text(text), from: .environment(variable))
            case .port, .arguments: continue  // no port variable; $BROWSER is xdg-open's, not a setting
            }
        }
        return layer
    }
}

/// A setting's value, of the kind its key holds.
package enum SettingValue: Sendable, Equatable {
    /// A string.
    case text(String)
    /// A port number.
    case port(UInt16)
    /// A list of words (scopes).
    case words([String])

    /// The kind of value.
    package var kind: ConfigurationKey.Kind {
        switch self {
        case .text: return .text
        case .port: return .port
        case .words: return .words
        }
    }

    /// The string, when this is one.
    package var text: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The value as shown by `sfauth config`: words space-separated.
    package var displayText: String {
        switch self {
        case .text(let text): return text
        case .port(let port): return String(port)
        case .words(let words): return words.joined(separator: " ")
        }
    }

    /// `"a  b c"` → `["a", "b", "c"]`.
    package static func splitWords(_ text: String) -> [String] {
        text.split(whereSeparator: \.isWhitespace).map(String.init)
    }
}
