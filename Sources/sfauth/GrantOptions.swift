import ArgumentParser
import SFAuth

/// `sfauth login`'s options for signing in without the browser redirect.
struct GrantOptions: ParsableArguments {
    @Flag(help: ArgumentHelp("Sign in with the device authorization grant (RFC 8628): approve a code on any device with a browser. For machines without one."))
    var device = false

    @Option(help: ArgumentHelp("The server's device authorization endpoint, for servers given with --authorize-url (discovery finds it with --issuer).",
                               valueName: "url"))
    var deviceAuthorizationURL: String?

    @Flag(help: ArgumentHelp("Sign in as the client itself (client credentials grant), for service accounts. The client secret comes from $SFAUTH_CLIENT_SECRET or --client-secret-file."))
    var clientCredentials = false

    @Option(help: ArgumentHelp("A file holding the client secret of a confidential client (first line).", valueName: "path"))
    var clientSecretFile: String?

    @Flag(help: ArgumentHelp("Sign in with a username and password (resource owner password grant). Discouraged (RFC 9700): the program sees your password and multi-factor sign-in cannot happen; use it only where the server offers nothing else. The password is read from the terminal without echo, or from the first line of standard input — never from the command line."))
    var password = false

    @Option(help: ArgumentHelp("The username for --password and --jwt-key-file.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("Sign in with a JWT bearer assertion (RFC 7523) signed by this private key (PEM, RSA or EC P-256), for CI: needs --username and --client-id.",
                               valueName: "path"))
    var jwtKeyFile: String?

    @Option(help: ArgumentHelp("The JWT assertion's audience. Default: https://login.salesforce.com (test.salesforce.com for sandboxes) for Salesforce, else the issuer or token endpoint.",
                               valueName: "url"))
    var audience: String?

    /// How many of the grant choices were given.
    var chosenGrants: [String] {
        [device ? "--device" : nil, clientCredentials ? "--client-credentials" : nil, password ? "--password" : nil,
         jwtKeyFile != nil ? "--jwt-key-file" : nil].compactMap { $0 }
    }

    /// Whether the browser sign-in is replaced by another grant.
    var replacesBrowser: Bool { !chosenGrants.isEmpty }

    func validate() throws {
        if chosenGrants.count > 1 {
            throw ValidationError("Choose one way to sign in: \(chosenGrants.joined(separator: ", ")) exclude each other.")
        }
        if (password || jwtKeyFile != nil) && (username ?? "").isEmpty {
            throw ValidationError("\(password ? "--password" : "--jwt-key-file") needs --username.")
        }
        if username != nil && !password && jwtKeyFile == nil {
            throw ValidationError("--username goes with --password or --jwt-key-file (for the browser, use --login-hint).")
        }
        if audience != nil && jwtKeyFile == nil {
            throw ValidationError("--audience goes with --jwt-key-file.")
        }
    }
}
