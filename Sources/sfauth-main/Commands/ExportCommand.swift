import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth export --sfdx-url`: an account as an SFDX auth URL, for a CI secret.
struct ExportCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print a Salesforce account as an SFDX auth URL (force://…), for CI secrets.",
        discussion: """
            The URL holds the account's refresh token: anyone who has it can act as you until the token \
            is revoked (sfauth logout, or the org's Connected Apps OAuth Usage). Store it only in a secret \
            store. sfauth login --sfdx-url-file reads it back, as sf org login sfdx-url does. The client \
            secret is never stored, so the URL has none; set SFAUTH_CLIENT_SECRET where it is used if \
            the connected app needs one.

            Examples:
              (umask 077; sfauth export --sfdx-url --account work > auth-url.txt)   # a file only you can read
              gh secret set SFDX_AUTH_URL < auth-url.txt
            """
    )

    @Flag(help: "Print the SFDX auth URL (the only format there is).")
    var sfdxUrl = false

    @Option(help: ArgumentHelp("The account: alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    func validate() throws {
        if !sfdxUrl { throw ValidationError("Say what to export: --sfdx-url.") }
    }

    func run(in context: CommandContext) throws {
        let store = try context.accountStore()
        guard let credentials = try store.credentials(of: try store.identifier(selectedBy: account)) else {
            throw OAuthError.loginRequired("Not signed in: no account is stored. Run `sfauth login` first.")
        }
        guard credentials.server.flavor == .salesforce else {
            throw OAuthError.configuration("\(credentials.selectableName) is not a Salesforce account; an SFDX auth URL is for Salesforce orgs")
        }
        guard let refreshToken = try store.refreshToken(of: credentials) else {
            throw OAuthError.configuration("\(credentials.selectableName) has no refresh token to export (sign in with the refresh_token scope)")
        }
        let instance = credentials.instanceURL ?? credentials.server.issuer ?? credentials.server.tokenEndpoint
        StandardError.line("This URL holds the long-lived refresh token of \(credentials.displayLabel): keep it in a secret store only.")
        print(SFDXAuthURL(clientId: credentials.clientId, clientSecret: nil, refreshToken: refreshToken, instanceURL: instance).text)
    }
}
