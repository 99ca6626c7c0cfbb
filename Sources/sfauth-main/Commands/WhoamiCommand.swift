import ArgumentParser
import SFAuth
import SFAuthCLI
import FoundationEssentials

/// `sfauth whoami`: shows who an account belongs to.
struct WhoamiCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami",
        abstract: "Show who the default (or given) account belongs to.",
        discussion: """
            Prints what the server said at sign-in: username, display name, email, user and organization \
            ids, and where API calls go. Makes no network request.

            Examples:
              sfauth whoami
              sfauth whoami work --json
            """
    )

    @Argument(help: ArgumentHelp("Alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    /// The earlier spelling, `--account NAME`, still works.
    @Option(name: .customLong("account"), help: .hidden)
    var accountOption: String?

    func validate() throws {
        if account != nil && accountOption != nil { throw ValidationError("Give the account once.") }
    }

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        do throws(OAuthError) {
            let store = try StoreSetup.existingAccounts()
            let name = account ?? accountOption
            let identifier = if let name { try AccountResolver(store: store).identifier(for: name) } else { try store.defaultIdentifier() }
            guard let identifier, let credentials = try store.load(identifier: identifier) else {
                throw OAuthError.loginRequired("Not signed in. Run `sfauth login` first.")
            }
            let fields: [(String, String?)] = [
                ("username", credentials.username), ("name", credentials.displayName), ("email", credentials.email),
                ("user_id", credentials.userId), ("organization_id", credentials.organizationId),
                ("instance_url", credentials.instanceURL), ("server", credentials.server.issuer ?? credentials.server.tokenEndpoint),
                ("alias", credentials.alias), ("account", credentials.identifier),
            ]
            if json {
                var object = Dictionary(uniqueKeysWithValues: fields.map { ($0.0, $0.1.map(JSONValue.string) ?? .null) })
                object["version"] = .number(1)
                print(JSONOutput.render(object))
            } else {
                let width = fields.map(\.0.count).max() ?? 0
                print(fields.compactMap { name, value in value.map { "\(name.padding(toLength: width))  \($0.terminalSafe)" } }.joined(separator: "\n"))
            }
        } catch {
            throw CommandFailure(error)
        }
    }
}
