import SFAuth

/// What `sfauth login` was asked on its command line, as plain values: the options, without the
/// argument parser. `sfauth config` takes the same, being its dry run.
package struct SignInRequest: Sendable, Equatable {
    /// The server, client, redirect and grant settings given as flags (the top configuration layer).
    package var flags = ConfigurationLayer()
    /// `--config PATH`.
    package var configPath: String?
    /// `--profile NAME`.
    package var profile: String?

    /// How to sign in when it is not the browser: `--device`, `--client-credentials`, `--password`,
    /// `--sfdx-url-file` (`--jwt-key-file` is a setting, in `flags`).
    package var grant: GrantFlag?
    /// `--client-secret-file PATH`.
    package var clientSecretFile: String?
    /// `--client-file`: a Google client file (`client_secret_….json`) with the client id and secret.
    package var clientFile: String?
    /// `--sfdx-url-file PATH` (`-`: standard input).
    package var sfdxURLFile: String?

    /// `--browser-command`: the command line that opens the URL.
    package var browserCommand: String?
    /// `--no-browser`.
    package var noBrowser = false
    /// `--paste`.
    package var paste = false
    /// `--timeout SECONDS`.
    package var timeout: Int?
    /// `--alias NAME`.
    package var alias: String?
    /// `--storage MODE`.
    package var storage: StorageMode?
    /// `--account NAME`: sign in again to that stored account.
    package var account: String?
    /// `--verbose`.
    package var verbose = false
    /// `--force`: a fresh sign-in (`prompt=login`) to the default or `--account` account.
    package var force = false
    /// `--resource URL`: sign in to a protected resource, starting from its URL.
    package var resource: String?
    /// `--client-metadata-url URL`: a Client ID Metadata Document naming sfauth (with `--resource`).
    package var clientMetadataURL: String?

    /// A grant chosen by a flag.
    package enum GrantFlag: String, Sendable, Equatable {
        case device = "--device"
        case clientCredentials = "--client-credentials"
        case password = "--password"
        case jwtKeyFile = "--jwt-key-file"
        case sfdxURLFile = "--sfdx-url-file"
    }

    /// Creates a request; every field has the default of its option.
    package init() {}

    /// The scopes given with `--scope`, which replace a stored account's when it signs in again.
    package var scopes: [String] {
        if case .words(let scopes)? = flags[.scopes]?.value { return scopes }
        return []
    }
}
