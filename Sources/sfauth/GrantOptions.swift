import ArgumentParser
import SFAuth

/// `sfauth login`'s options for signing in without the browser redirect.
struct GrantOptions: ParsableArguments {
    @Flag(help: ArgumentHelp("Sign in with the device authorization grant (RFC 8628): approve a code on any device with a browser. For machines without one."))
    var device = false

    @Flag(help: ArgumentHelp("Sign in as the client itself (client credentials grant), for service accounts. The client secret comes from $SFAUTH_CLIENT_SECRET or --client-secret-file."))
    var clientCredentials = false

    @Option(help: ArgumentHelp("A file holding the client secret of a confidential client (first line).", valueName: "path"))
    var clientSecretFile: String?

    @Flag(help: ArgumentHelp("Sign in with a username and password (resource owner password grant). Discouraged (RFC 9700): the program sees your password and multi-factor sign-in cannot happen; use it only where the server offers nothing else. The password is read from the terminal without echo, or from the first line of standard input — never from the command line."))
    var password = false

    @Option(help: ArgumentHelp("The username for --password and --jwt-key-file. Default: $SFAUTH_USERNAME, else the profile's username.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("Sign in with a JWT bearer assertion (RFC 7523) signed by this private key (PEM, RSA or EC P-256), for CI: needs --username and --client-id. Also $SFAUTH_JWT_KEY_FILE or the profile's jwt_key_file.",
                               valueName: "path"))
    var jwtKeyFile: String?

    @Option(help: ArgumentHelp("The JWT assertion's audience. Default: https://login.salesforce.com (test.salesforce.com for sandboxes) for Salesforce, else the issuer or token endpoint.",
                               valueName: "url"))
    var audience: String?

    /// The grant flags given.
    var chosenGrants: [String] {
        [device ? "--device" : nil, clientCredentials ? "--client-credentials" : nil, password ? "--password" : nil,
         jwtKeyFile != nil ? "--jwt-key-file" : nil].compactMap { $0 }
    }

    func validate() throws {
        if chosenGrants.count > 1 {
            throw ValidationError("Choose one way to sign in: \(chosenGrants.joined(separator: ", ")) exclude each other.")
        }
    }

    /// Adds `--username`, `--jwt-key-file` and `--audience` to the command line's configuration layer,
    /// so they override the environment and the profile like every other flag.
    func addSettings(to layer: inout ConfigurationLayer) {
        for case let (key, value?) in [(ConfigurationKey.username, username), (.jwtKeyFile, jwtKeyFile), (.audience, audience)] {
            layer.set(key, .text(value), from: .flag(key.commandLineFlag ?? "--" + key.rawValue))
        }
    }

    /// The grant to sign in with, or `nil` for the browser. A JWT key file from the environment or
    /// the profile chooses the JWT bearer grant unless a flag chose another.
    ///
    /// Reads the password (terminal without echo, or standard input) and the private key here.
    func grant(for resolved: ResolvedConfiguration, server: AuthorizationServer) async throws(OAuthError) -> Grant? {
        let username = resolved.username?.value
        if device { return .deviceCode }
        if clientCredentials { return .clientCredentials }
        if password {
            guard let username else { throw .configuration("--password needs a username: give \(ConfigurationKey.username.waysToSet)") }
            let host = EndpointURL.parts(of: server.tokenEndpoint)?.host ?? "the server"
            return .password(username: username, password: try SecretInput.password(prompt: "Password for \(username) at \(host): "))
        }
        if let keyFile = resolved.jwtKeyFile {
            guard let username else {
                throw .configuration("the JWT bearer grant (\(keyFile.source)) needs a username: give \(ConfigurationKey.username.waysToSet)")
            }
            let signer = try await JWTAssertionSigner(privateKeyFile: keyFile.value)
            return .jwtBearer(username: username, signer: signer, audience: resolved.audience?.value)
        }
        if let audience = resolved.audience {
            throw .configuration("\(audience.source): audience is for the JWT bearer grant; give --jwt-key-file too")
        }
        return nil
    }
}
