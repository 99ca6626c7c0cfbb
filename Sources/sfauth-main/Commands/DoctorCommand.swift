import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth doctor`: checks what a sign-in needs on this machine, one line per check, with the fix.
struct DoctorCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what a sign-in needs here: browser, display, keyring, store, clock, proxy, callback port, the server's metadata.",
        discussion: """
            Prints one line per check — ok, note or PROBLEM — with the fix. Exits 1 when something would \
            stop a sign-in (the store cannot be used, the callback port is taken, $BROWSER names nothing \
            that exists, nothing answers at DISPLAY, the server cannot be reached); notes (no display, a \
            locked keyring, a proxy) only change how the sign-in goes. The server is the default \
            account's (or --server URL): one request, which also compares its clock with this machine's.

            With --issuer URL or --preset NAME (and --host for a preset that takes one), the server is \
            the one sfauth login would use with those options (over SFAUTH_* variables and the \
            configuration file's profile, as login reads them), and its published metadata is checked \
            instead of the default account's server: OpenID Connect's <issuer>/.well-known/openid-configuration, \
            else RFC 8414's. One line each for the issuer it names (PROBLEM when another: sfauth refuses \
            it), PKCE S256, a revocation endpoint (logout), RFC 9207 iss, offline_access (refresh \
            tokens), a device authorization endpoint (login --device), plain http; the clock is \
            compared with the server that answered. A preset with built-in endpoints (github, the \
            salesforce ones) gets one note: sfauth reads no metadata for it. --server does not go with them.

            Examples:
              sfauth doctor
              sfauth doctor --server https://login.salesforce.com --port 1717
              sfauth doctor --issuer https://accounts.google.com
              sfauth doctor --preset github
            """
    )

    @Option(help: ArgumentHelp("A server whose clock to compare with this machine's. Default: the default account's.", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("The callback port to check. Default: the default account's, else 1717 (Salesforce's).", valueName: "port"))
    var port: UInt16?

    @Option(
        help: ArgumentHelp("Check this OpenID Connect / OAuth 2.0 issuer's published metadata, as sfauth login --issuer reads it.", valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "Check the server of this preset (\(Preset.names.joined(separator: ", "))), as sfauth login --preset resolves it.", valueName: "name"))
    var preset: String?

    @Option(help: ArgumentHelp("With --preset: the host of a preset that takes one (github: a GitHub Enterprise Server).", valueName: "host"))
    var host: String?

    func validate() throws {
        if server != nil && (issuer != nil || preset != nil) {
            throw ValidationError("Give --server or --issuer/--preset, not both: the clock is compared with the issuer's server.")
        }
        if host != nil && preset == nil { throw ValidationError("--host goes with --preset (a preset that takes a host).") }
    }

    /// `--preset`, `--issuer` and `--host` as the top configuration layer, like login's flags;
    /// `nil` when neither --preset nor --issuer was given.
    private var serverOptions: ConfigurationLayer? {
        guard issuer != nil || preset != nil else { return nil }
        var layer = ConfigurationLayer()
        for case (let key, let value?) in [(ConfigurationKey.preset, preset), (.issuer, issuer), (.host, host)] {
            layer.set(key, .text(value), from: .flag(key.commandLineFlag ?? "--" + key.rawValue))
        }
        return layer
    }

    func run(in context: CommandContext) async throws {
        let facts = await DoctorFacts.gather(in: context, server: server, port: port, serverOptions: serverOptions)
        let checks = DoctorCheck.checks(facts)
        for check in checks { print(check.line) }
        if checks.contains(where: { $0.verdict == .problem }) { throw CommandFailure(silently: .storage) }
    }
}
