import FoundationEssentials
import SFAuth
import Testing

@testable import SFAuthCLI

/// The context every command gets: built once from the environment; each setting read when a
/// command asks for it, so a command fails only on the variables it uses.
@Suite struct CommandContextTests {
    static func context(_ environment: [String: String]) -> CommandContext {
        CommandContext(environment: environment, session: TerminalSession(), executablePath: "/usr/bin/sfauth")
    }

    @Test func sfauthsVariablesAreNamedFromItsAppIdentity() {
        #expect(AppIdentity.sfauth.environmentPrefix == "SFAUTH")
        #expect(AppIdentity(name: "acme-cli.dev").environmentPrefix == "ACME_CLI_DEV")
        #expect(Self.context([:]).settings.name("HOME") == "SFAUTH_HOME")
        #expect(ConfigurationKey.clientId.environmentVariable == "SFAUTH_CLIENT_ID")
    }

    @Test func theStoreIsWhereTheEnvironmentSays() throws {
        #expect(try Self.context(["SFAUTH_HOME": "/tmp/s"]).accountStore().directory == "/tmp/s")
        #expect(try Self.context(["XDG_DATA_HOME": "/d", "HOME": "/h"]).accountStore().directory == "/d/sfauth")
        #expect(try Self.context(["HOME": "/h"]).accountStore().directory == "/h/.local/share/sfauth")
        #expect(throws: OAuthError.self) { try Self.context(["SFAUTH_HOME": "relative"]).accountStore() }
    }

    @Test func aMalformedVariableFailsOnlyTheCommandsThatReadIt() throws {
        let context = Self.context(["SFAUTH_HOME": "/tmp/s", "SFAUTH_HTTP_TIMEOUT": "soon"])
        #expect(try context.accountStore().directory == "/tmp/s")
        #expect(throws: OAuthError.configuration("SFAUTH_HTTP_TIMEOUT must be a number of seconds between 0 and 3600, not 'soon'")) {
            try context.httpClient()
        }
    }

    @Test func theHTTPTimeoutShortensBothLimits() throws {
        let client = try Self.context(["SFAUTH_HTTP_TIMEOUT": "2.5"]).httpClient()
        #expect(client.options.totalTimeout == .milliseconds(2500))
        #expect(client.options.connectTimeout == .milliseconds(2500))
        #expect(try Self.context([:]).httpClient().options.totalTimeout == .seconds(30))
    }

    @Test func aChildInheritsNoSecret() {
        let context = Self.context(["SFAUTH_CLIENT_SECRET": "s", "SFAUTH_ACCESS_TOKEN": "a", "SF_ACCESS_TOKEN": "t", "PATH": "/bin"])
        #expect(context.childEnvironment == ["PATH": "/bin"])
        #expect(context.clientSecret == "s")
    }

    @Test func aSuppliedTokenWinsWithoutAStore() async throws {
        let token = try await Self.context(["SFAUTH_ACCESS_TOKEN": "a", "SFAUTH_INSTANCE_URL": "https://i"]).accessToken(account: "any")
        #expect(token == IssuedToken(SuppliedToken(accessToken: "a", instanceURL: "https://i")))
        #expect(TokenOutput.shell.render(token) == "export SF_ACCESS_TOKEN='a'\nexport SF_INSTANCE_URL='https://i'\nunset SF_USERNAME")
    }
}
