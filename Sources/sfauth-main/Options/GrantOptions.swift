import ArgumentParser
import SFAuth
import SFAuthCLI
import FoundationEssentials

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

    @Option(help: ArgumentHelp("Sign in with an SFDX auth URL (force://<client id>:<secret>:<refresh token>@<instance>, as sf org login sfdx-url reads) from this file, or - for standard input. For CI secrets.",
                               valueName: "path"))
    var sfdxUrlFile: String?

    /// The grant flags given; `--jwt-key-file` (a setting of the shared provider options) counts too.
    func chosenGrants(jwtKeyFileGiven: Bool) -> [String] {
        [device ? "--device" : nil, clientCredentials ? "--client-credentials" : nil, password ? "--password" : nil,
         jwtKeyFileGiven ? "--jwt-key-file" : nil, sfdxUrlFile != nil ? "--sfdx-url-file" : nil].compactMap { $0 }
    }

    /// The SFDX auth URL of `--sfdx-url-file`, read and parsed (the file's first non-empty line).
    func sfdxAuthURL() throws(OAuthError) -> SFDXAuthURL? {
        guard let path = sfdxUrlFile else { return nil }
        let bytes: [UInt8]
        if path == "-" {
            bytes = StandardInput.readAll()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw .configuration("cannot read the SFDX auth URL file \(path)")
            }
            bytes = Array(contents)
        }
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first { !$0.allSatisfy(\.isWhitespace) }
        guard let line else { throw .configuration("the SFDX auth URL file \(path) is empty") }
        return try SFDXAuthURL(parsing: String(line))
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
