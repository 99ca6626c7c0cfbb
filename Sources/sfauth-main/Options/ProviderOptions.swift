import ArgumentParser
import SFAuth
import SFAuthCLI

/// The flags that choose the server and the client, shared by `login` and `config`: the top layer of
/// the configuration, over `SFAUTH_*` variables, the configuration file's profile and its preset.
struct ProviderOptions: ParsableArguments {
    @OptionGroup(title: "Configuration file")
    var file: ConfigurationFileOptions

    @OptionGroup(title: "Server")
    var server: ServerOptions

    @OptionGroup(title: "Client")
    var client: ClientOptions

    @OptionGroup(title: "Redirect (browser sign-in)")
    var redirect: RedirectOptions

    @OptionGroup(title: "User and key (password and JWT bearer grants)")
    var grantSettings: GrantSettingOptions

    func validate() throws {
        if server.sandbox && server.preset != nil { throw ValidationError("Give --sandbox or --preset, not both.") }
        if let bad = client.parameters.first(where: { !$0.contains("=") || $0.hasPrefix("=") }) {
            throw ValidationError("--param takes name=value, not '\(bad)'.")
        }
    }

    /// The settings given on the command line, each with its flag as the source.
    var layer: ConfigurationLayer {
        var layer = ConfigurationLayer()
        if server.sandbox { layer.set(.preset, .text(ProviderPreset.salesforceSandbox.name), from: .flag("--sandbox")) }
        let texts: [(ConfigurationKey, String?)] = [
            (.preset, server.preset), (.host, server.host), (.tenant, server.tenant), (.authority, server.authority),
            (.domain, server.domain), (.instanceURL, server.instanceURL), (.issuer, server.issuer),
            (.authorizeURL, server.authorizeURL),
            (.tokenURL, server.tokenURL), (.revokeURL, server.revokeURL), (.userinfoURL, server.userinfoURL),
            (.deviceAuthorizationURL, server.deviceAuthorizationURL), (.clientId, client.clientId), (.callbackHost, redirect.callbackHost),
            (.callbackPath, redirect.callbackPath), (.loginHint, client.loginHint), (.username, grantSettings.username),
            (.jwtKeyFile, grantSettings.jwtKeyFile), (.audience, grantSettings.audience),
        ]
        for case (let key, let value?) in texts {
            layer.set(key, .text(value), from: .flag(key.commandLineFlag ?? "--" + key.rawValue))
        }
        if !client.scopes.isEmpty { layer.set(.scopes, .words(client.scopes.flatMap(SettingValue.splitWords)), from: .flag("--scope")) }
        if let port = redirect.port { layer.set(.callbackPort, .port(port), from: .flag("--port")) }
        for parameter in client.parameters {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            layer.addParameter(name: String(parts[0]), value: String(parts[1]), from: .flag("--param"))
        }
        return layer
    }
}

/// A group of `ProviderOptions`, shown under its own heading in `--help`.
struct ConfigurationFileOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The configuration file. Default: $SFAUTH_CONFIG, else $XDG_CONFIG_HOME/sfauth/config.toml (~/.config/sfauth/config.toml).",
            valueName: "path"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "The profile of the configuration file to use. Default: $SFAUTH_PROFILE, else the file's default_profile.",
            valueName: "name"))
    var profile: String?
}

/// A group of `ProviderOptions`, shown under its own heading in `--help`.
struct ServerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A built-in preset: \(Preset.names.joined(separator: ", ")). Default: salesforce.", valueName: "name"))
    var preset: String?

    @Flag(help: "Sign in to a Salesforce sandbox (test.salesforce.com); the same as --preset salesforce-sandbox.")
    var sandbox = false

    @Option(
        help: ArgumentHelp(
            "With --preset github or gitlab: your own instance's host (ghe.example.com, gitlab.example.com). Default: github.com, gitlab.com.",
            valueName: "host"))
    var host: String?

    @Option(
        help: ArgumentHelp(
            "With --preset entra: the tenant, organizations (default), common, consumers, or your tenant id or domain.", valueName: "tenant"))
    var tenant: String?

    @Option(
        help: ArgumentHelp(
            "With --preset entra: the sign-in host of a sovereign cloud, e.g. https://login.microsoftonline.us. Default: https://login.microsoftonline.com.",
            valueName: "url"))
    var authority: String?

    @Option(
        help: ArgumentHelp(
            "With --preset cognito: the user pool's domain (DOMAIN.auth.REGION.amazoncognito.com, or your custom domain).", valueName: "host"))
    var domain: String?

    @Option(help: ArgumentHelp("Sign in through a Salesforce My Domain, e.g. https://acme.my.salesforce.com.", valueName: "url"))
    var instanceURL: String?

    @Option(help: ArgumentHelp("An OpenID Connect / OAuth 2.0 issuer: its endpoints are read from its published metadata.", valueName: "url"))
    var issuer: String?

    @Option(
        help: ArgumentHelp(
            "Sign in to a protected resource (an MCP server, an API) starting from its URL: its authorization server and a client are found by themselves (RFC 9728, RFC 7591); --issuer chooses among several servers.",
            valueName: "url"))
    var resource: String?

    @Option(help: ArgumentHelp("Authorization endpoint of a non-Salesforce server (needs --token-url).", valueName: "url"))
    var authorizeURL: String?

    @Option(help: ArgumentHelp("Token endpoint of a non-Salesforce server (needs --authorize-url).", valueName: "url"))
    var tokenURL: String?

    @Option(help: ArgumentHelp("Revocation endpoint (RFC 7009) of a non-Salesforce server, used by logout.", valueName: "url"))
    var revokeURL: String?

    @Option(help: ArgumentHelp("OpenID Connect userinfo endpoint of a non-Salesforce server, to learn who signed in.", valueName: "url"))
    var userinfoURL: String?

    @Option(
        help: ArgumentHelp(
            "The server's device authorization endpoint (RFC 8628), for --device with servers given by their endpoints (discovery finds it with --issuer).",
            valueName: "url"))
    var deviceAuthorizationURL: String?
}

/// A group of `ProviderOptions`, shown under its own heading in `--help`.
struct ClientOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The OAuth client id. Default for Salesforce: \(Salesforce.defaultClientId).", valueName: "id"))
    var clientId: String?

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "Scopes to request, space-separated; repeatable. Default for Salesforce: \(Salesforce.defaultScopes.joined(separator: " ")).",
            valueName: "scopes"))
    var scopes: [String] = []

    @Option(help: ArgumentHelp("Pre-fill the username on the login page (login_hint).", valueName: "username"))
    var loginHint: String?

    @Option(
        help: ArgumentHelp(
            "With --resource: the https URL of a Client ID Metadata Document describing sfauth, used as the client id where the server accepts such documents.",
            valueName: "url"))
    var clientMetadataURL: String?

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "An extra authorization request parameter, e.g. prompt=consent or a provider hint; repeatable.", valueName: "name=value"))
    var parameters: [String] = []
}

/// A group of `ProviderOptions`, shown under its own heading in `--help`.
struct RedirectOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Port for the redirect listener; 0 picks a free one. Default: 1717 for Salesforce, 0 otherwise.", valueName: "port"))
    var port: UInt16?

    @Option(help: ArgumentHelp("Path of the redirect URI. Default: /OauthRedirect for Salesforce, /callback otherwise.", valueName: "path"))
    var callbackPath: String?

    @Option(
        help: ArgumentHelp(
            "Host of the redirect URI: 127.0.0.1, [::1] or localhost. Default: localhost for Salesforce, 127.0.0.1 otherwise.",
            valueName: "host"))
    var callbackHost: String?
}

/// A group of `ProviderOptions`, shown under its own heading in `--help`.
struct GrantSettingOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The username for --password and --jwt-key-file. Default: $SFAUTH_USERNAME, else the profile's username.", valueName: "name"))
    var username: String?

    @Option(
        help: ArgumentHelp(
            "Sign in with a JWT bearer assertion (RFC 7523) signed by this private key (PEM, RSA or EC P-256), for CI: needs --username and --client-id. Also $SFAUTH_JWT_KEY_FILE or the profile's jwt_key_file.",
            valueName: "path"))
    var jwtKeyFile: String?

    @Option(
        help: ArgumentHelp(
            "The JWT assertion's audience (default: https://login.salesforce.com, test.salesforce.com for sandboxes, else the issuer or token endpoint); with --preset auth0, the API the access token is for.",
            valueName: "url"))
    var audience: String?
}
