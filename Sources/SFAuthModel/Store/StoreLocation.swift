/// Where an application's credentials directory is, by the XDG Base Directory specification.
package enum StoreLocation {
    /// `$XDG_DATA_HOME/<app>`, else `$HOME/.local/share/<app>`. Relative XDG paths are ignored, as
    /// the specification says. (A tool may offer its own override first: see
    /// `EnvironmentSettings.credentialsDirectory()`.)
    ///
    /// - Throws: `.configuration` when neither variable holds an absolute path.
    package static func credentialsDirectory(app: AppIdentity, environment: [String: String]) throws(OAuthError) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/" + app.name }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw .configuration(
                "neither XDG_DATA_HOME nor HOME is set to an absolute path, so there is no place for \(app.displayName)'s credentials; set HOME")
        }
        return home + "/.local/share/" + app.name
    }
}
