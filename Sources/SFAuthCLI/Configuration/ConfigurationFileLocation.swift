import SFAuth

/// Where the configuration file is: `--config PATH`, else `$SFAUTH_CONFIG`, else
/// `$XDG_CONFIG_HOME/sfauth/config.toml`, else `$HOME/.config/sfauth/config.toml` (XDG base
/// directory specification; relative XDG paths are ignored, as it says).
package struct ConfigurationFileLocation: Sendable, Equatable {
    /// The variable that names the file: `SFAUTH_CONFIG`.
    package static let variable = "SFAUTH_CONFIG"

    /// The file's path.
    package var path: String
    /// What named it: `flag --config`, `env SFAUTH_CONFIG`, or `default` for the XDG location.
    package var source: ConfigurationSource

    /// Whether the file was asked for by name, so that its absence is an error (a missing file at
    /// the default location just means no configuration).
    package var isExplicit: Bool { source != .builtIn }

    /// Creates a location.
    package init(path: String, source: ConfigurationSource) {
        self.path = path
        self.source = source
    }

    /// The location for `--config` (`flag`) and `environment`; `nil` when nothing names a file and
    /// neither `XDG_CONFIG_HOME` nor `HOME` is an absolute path.
    package static func resolve(flag: String?, environment: [String: String]) -> ConfigurationFileLocation? {
        if let flag { return ConfigurationFileLocation(path: flag, source: .flag("--config")) }
        if let path = environment[variable], !path.isEmpty {
            return ConfigurationFileLocation(path: path, source: .environment(variable))
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return ConfigurationFileLocation(path: config + "/sfauth/config.toml", source: .builtIn)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return ConfigurationFileLocation(path: home + "/.config/sfauth/config.toml", source: .builtIn)
        }
        return nil
    }
}
