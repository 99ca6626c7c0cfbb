import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth login`'s options beyond the server and client: how the browser is opened, which stored
/// account to sign in to again, how long to wait, where secrets go. `sfauth config` takes them too,
/// so that it is a true dry run of the same command line.
struct SessionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Command that opens the URL instead of xdg-open; the URL replaces %s wherever it appears (url=%s), else it is appended.",
            valueName: "command"))
    var browserCommand: String?

    @Flag(help: "Do not open a browser; print the URL to open instead.")
    var noBrowser = false

    @Flag(
        help: ArgumentHelp(
            "Also accept the address the browser ends up at, pasted on standard input (for a browser on another machine). On by default when standard input is a terminal and no browser can be shown here."
        ))
    var paste = false

    @Option(
        help: ArgumentHelp(
            "Seconds to wait for the browser's redirect (default 300), or for the device code's approval (default: as long as the server keeps the code valid).",
            valueName: "seconds"))
    var timeout: Int?

    @Option(help: ArgumentHelp("A short name for this account, for --account and sfauth use.", valueName: "name"))
    var alias: String?

    @Option(
        help: ArgumentHelp(
            "Where the refresh token goes: auto (the keyring when one answers, else the 0600 file), keyring, or file. Default: $SFAUTH_STORAGE or auto.",
            valueName: "mode"))
    var storage: StorageMode?

    @Option(
        help: ArgumentHelp(
            "Sign in again to this stored account (alias, username, email or identifier) the way it was signed in: its server, client, scopes, redirect and grant.",
            valueName: "account"))
    var account: String?

    @Flag(name: .shortAndLong, help: "Also say where the credentials were saved.")
    var verbose = false

    @Flag(
        help:
            "Sign in again to the default (or --account) account, making the server ask for a fresh sign-in (prompt=login); its old tokens are revoked once the new sign-in succeeded."
    )
    var force = false
}

extension StorageMode: ExpressibleByArgument {}

extension SignInRequest {
    /// The request `sfauth login` (or its dry run, `sfauth config`) was given.
    init(_ provider: ProviderOptions, _ grants: GrantOptions, _ session: SessionOptions) {
        self.init()
        flags = provider.layer
        configPath = provider.file.config
        profile = provider.file.profile
        grant = grants.chosen(jwtKeyFileGiven: provider.grantSettings.jwtKeyFile != nil).first
        clientSecretFile = grants.clientSecretFile
        clientFile = grants.clientFile
        sfdxURLFile = grants.sfdxUrlFile
        browserCommand = session.browserCommand
        noBrowser = session.noBrowser
        paste = session.paste
        timeout = session.timeout
        alias = session.alias
        storage = session.storage
        account = session.account
        verbose = session.verbose
        force = session.force
        resource = provider.server.resource
        clientMetadataURL = provider.client.clientMetadataURL
    }
}
