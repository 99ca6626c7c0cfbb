import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth login`'s options for signing in without the browser redirect.
struct GrantOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Sign in with the device authorization grant (RFC 8628): approve a code on any device with a browser. For machines without one."))
    var device = false

    @Flag(
        help: ArgumentHelp(
            "Sign in as the client itself (client credentials grant), for service accounts. The client secret comes from $SFAUTH_CLIENT_SECRET or --client-secret-file."
        ))
    var clientCredentials = false

    @Option(help: ArgumentHelp("A file holding the client secret of a confidential client (first line).", valueName: "path"))
    var clientSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "Google's client file (client_secret_….json, downloaded for a Desktop app OAuth client): its client id and secret. Implies --preset google unless another preset is given.",
            valueName: "path"))
    var clientFile: String?

    @Flag(
        help: ArgumentHelp(
            "Sign in with a username and password (resource owner password grant). Discouraged (RFC 9700): the program sees your password and multi-factor sign-in cannot happen; use it only where the server offers nothing else. The password is read from the terminal without echo, or from the first line of standard input — never from the command line."
        ))
    var password = false

    @Option(
        help: ArgumentHelp(
            "Sign in with an SFDX auth URL (force://<client id>:<secret>:<refresh token>@<instance>, as sf org login sfdx-url reads) from this file, or - for standard input. For CI secrets.",
            valueName: "path"))
    var sfdxUrlFile: String?

    /// The grant flags given; `--jwt-key-file` (a setting of the shared provider options) counts too.
    func chosen(jwtKeyFileGiven: Bool) -> [SignInRequest.GrantFlag] {
        [
            device ? .device : nil, clientCredentials ? .clientCredentials : nil, password ? .password : nil,
            jwtKeyFileGiven ? .jwtKeyFile : nil, sfdxUrlFile != nil ? .sfdxURLFile : nil,
        ].compactMap { $0 }
    }
}
