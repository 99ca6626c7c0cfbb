import SFAuth

/// The configuration a command runs with: the file and profile it read, and the resolved settings.
///
/// Precedence, highest first: the command line (`flags`), the environment (`SFAUTH_*`, see
/// `ConfigurationKey.environmentVariable`), the chosen profile of the configuration file, its
/// preset, sfauth's defaults. The profile is `--profile`, else `$SFAUTH_PROFILE`, else the file's
/// `default_profile`, else none.
package struct LoadedConfiguration: Sendable, Equatable {
    /// Where the configuration file is (or would be); `nil` when no location can be worked out.
    package var file: ConfigurationFileLocation?
    /// Whether that file exists (and was read).
    package var fileExists: Bool
    /// The profile used and what chose it; `nil` when none.
    package var profile: Sourced<String>?
    /// The resolved settings.
    package var resolved: ResolvedConfiguration

    /// Creates a loaded configuration.
    package init(file: ConfigurationFileLocation?, fileExists: Bool, profile: Sourced<String>?, resolved: ResolvedConfiguration) {
        self.file = file
        self.fileExists = fileExists
        self.profile = profile
        self.resolved = resolved
    }

    /// Reads the configuration file and resolves the settings for `flags`.
    ///
    /// - Parameters:
    ///   - flags: the settings given on the command line.
    ///   - configPath: `--config PATH`, when given.
    ///   - profileName: `--profile NAME`, when given.
    ///   - settings: sfauth's environment variables (`SFAUTH_CONFIG`, `SFAUTH_PROFILE`, the layer of
    ///     `ConfigurationKey.environmentVariable`s) and the XDG ones.
    ///   - reportingMissing: list missing required values instead of throwing (`sfauth config`).
    /// - Throws: `OAuthError.configuration` when a file named by `--config` or `SFAUTH_CONFIG` does not
    ///   exist or cannot be read, the file is invalid (`FILE:LINE: …`), the profile does not exist, or
    ///   the settings do not resolve (see `ConfigurationResolver.resolve()`).
    package static func load(
        flags: ConfigurationLayer, configPath: String? = nil, profileName: String? = nil,
        settings: EnvironmentSettings, reportingMissing: Bool = false
    ) throws(OAuthError) -> LoadedConfiguration {
        let location = ConfigurationFileLocation.resolve(flag: configPath, settings: settings)
        let file = try location.flatMap { location throws(OAuthError) in try read(location) }

        var profileChoice: Sourced<String>?
        if let profileName {
            profileChoice = Sourced(profileName, from: .flag("--profile"))
        } else if let name = settings.value("PROFILE") {
            profileChoice = Sourced(name, from: .environment(settings.name("PROFILE")))
        } else {
            profileChoice = file?.defaultProfile
        }
        var layers = [flags, ConfigurationLayer.environment(settings)]
        if let profileChoice {
            guard let file else {
                let place = location.map { "there is no configuration file at \($0.path)" } ?? "no configuration file was found (HOME is not set)"
                throw .configuration("\(profileChoice.source): no profile '\(profileChoice.value)': \(place); create it or give --config")
            }
            layers.append(try file.profile(profileChoice))
        }
        let resolved = try ConfigurationResolver(layers: layers).resolve(reportingMissing: reportingMissing)
        return LoadedConfiguration(file: location, fileExists: file != nil, profile: profileChoice, resolved: resolved)
    }

    /// The parsed file at `location`; `nil` when a default-location file does not exist.
    private static func read(_ location: ConfigurationFileLocation) throws(OAuthError) -> ConfigurationFile? {
        let bytes: [UInt8]?
        do {
            bytes = try POSIXFile.read(location.path)
        } catch {
            throw .configuration("the configuration file (\(location.source)): \(error)")
        }
        guard let bytes else {
            if location.isExplicit {
                throw .configuration("\(location.source): the configuration file \(location.path) does not exist")
            }
            return nil
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .configuration("\(location.path): the file is not valid UTF-8 text")
        }
        return try ConfigurationFile.parse(text, path: location.path)
    }
}

/// Where the configuration file is: `--config PATH`, else `$SFAUTH_CONFIG`, else
/// `$XDG_CONFIG_HOME/sfauth/config.toml`, else `$HOME/.config/sfauth/config.toml` (XDG base
/// directory specification; relative XDG paths are ignored, as it says).
package struct ConfigurationFileLocation: Sendable, Equatable {
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

    /// The location for `--config` (`flag`) and the environment (`SFAUTH_CONFIG`, then the XDG
    /// variables); `nil` when nothing names a file and neither `XDG_CONFIG_HOME` nor `HOME` is an
    /// absolute path.
    package static func resolve(flag: String?, settings: EnvironmentSettings) -> ConfigurationFileLocation? {
        if let flag { return ConfigurationFileLocation(path: flag, source: .flag("--config")) }
        if let path = settings.value("CONFIG") {
            return ConfigurationFileLocation(path: path, source: .environment(settings.name("CONFIG")))
        }
        let environment = settings.environment
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return ConfigurationFileLocation(path: config + "/sfauth/config.toml", source: .builtIn)
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return ConfigurationFileLocation(path: home + "/.config/sfauth/config.toml", source: .builtIn)
        }
        return nil
    }
}
