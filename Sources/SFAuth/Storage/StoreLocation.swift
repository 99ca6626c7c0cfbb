import SFAuthCore

/// Where sfauth keeps its files, following the XDG base directory specification.
public enum StoreLocation {
    /// The environment variable that overrides the credentials directory: `SFAUTH_HOME`.
    public static let overrideVariable = "SFAUTH_HOME"

    /// The credentials directory: `$SFAUTH_HOME`, else `$XDG_DATA_HOME/sfauth`, else
    /// `$HOME/.local/share/sfauth`. Relative XDG paths are ignored, as the specification says.
    public static func credentialsDirectory(environment: [String: String]) throws(OAuthError) -> String {
        if let path = environment[overrideVariable], !path.isEmpty {
            // A relative path would name another directory in every working directory.
            guard path.hasPrefix("/") else {
                throw .configuration("\(overrideVariable) must be an absolute path, not '\(TerminalText.escaped(path))'; for example \(overrideVariable)=\"$PWD/\(TerminalText.escaped(path))\"")
            }
            return path
        }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/sfauth" }
        guard let home = environment["HOME"], home.hasPrefix("/") else {
            throw .configuration("neither \(overrideVariable), XDG_DATA_HOME nor HOME is set to an absolute path; set \(overrideVariable) to the directory for credentials")
        }
        return home + "/.local/share/sfauth"
    }
}
