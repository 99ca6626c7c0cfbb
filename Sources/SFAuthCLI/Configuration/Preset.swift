import SFAuth
/// A built-in starting point for a profile: `salesforce` (the default), `salesforce-sandbox`,
/// `salesforce-mydomain` and `oidc`. Each is a file in `Resources/presets` in the same format as a
/// profile, compiled in (`PresetFiles`), plus two keys of its own: `description`, and `requires` —
/// the keys a profile using it must supply (`instance_url` for a My Domain, `issuer` for OIDC).
package struct Preset: Sendable, Equatable {
    /// The preset used when nothing names a server: `salesforce`.
    package static let defaultName = "salesforce"

    /// The name, e.g. `salesforce-sandbox`.
    package var name: String
    /// One line saying what it is for.
    package var summary: String
    /// The keys that must be set where the preset is used.
    package var requires: [ConfigurationKey]
    /// The settings it gives, with source `preset NAME`.
    package var layer: ConfigurationLayer

    /// Whether the preset names its server itself (`salesforce`: login.salesforce.com), rather than
    /// requiring one (`salesforce-mydomain`, `oidc`).
    package var namesServer: Bool { layer.values.keys.contains { $0.role == .choosesServer } }

    /// Every preset name, sorted.
    package static var names: [String] { PresetFiles.all.keys.sorted() }

    /// The preset called `name`, or `nil` when there is none.
    ///
    /// - Throws: `OAuthError.configuration` when the compiled-in file is broken (a bug, caught by the tests).
    package static func named(_ name: String) throws(OAuthError) -> Preset? {
        guard let text = PresetFiles.all[name] else { return nil }
        return try parse(text, name: name)
    }

    /// Reads a preset file: top-level profile keys, `description`, `requires`, and a `[params]` table.
    static func parse(_ text: String, name: String) throws(OAuthError) -> Preset {
        let path = "Resources/presets/\(name).toml"
        let document = try ConfigurationParser.parse(text, path: path)
        if let table = document.tables.first(where: { $0.name != ["params"] }) {
            throw .configuration("\(path):\(table.line): a preset has no table but [params]")
        }
        let reader = ProfileReader(path: path, extraKeys: ["description", "requires"]) { _, _ in .preset(name) }
        let (layer, extras) = try reader.read(document.root, parameters: document.table(["params"]))
        if let key = layer[.preset] {
            throw .configuration("\(path): a preset cannot name another preset ('\(key.value.displayText)')")
        }
        guard case .string(let summary)? = extras["description"]?.value else {
            throw .configuration("\(path): a preset needs a description string")
        }
        var requires = [ConfigurationKey]()
        if let entry = extras["requires"] {
            guard case .strings(let names) = entry.value else {
                throw .configuration("\(path):\(entry.line): requires must be an array of key names")
            }
            for keyName in names {
                guard let key = ConfigurationKey(rawValue: keyName) else {
                    throw .configuration("\(path):\(entry.line): requires names the unknown key '\(keyName)'")
                }
                requires.append(key)
            }
        }
        return Preset(name: name, summary: summary, requires: requires, layer: layer)
    }
}
