import CredentialProtocols
import Foundation
import SFAuthModel
import Testing

/// What `sfauth exec`'s command starts with.
struct CommandEnvironmentTests {
    @Test func secretsAreStrippedAndTheTokensVariablesSetOrRemoved() {
        let environment = [
            "PATH": "/bin", "SFAUTH_CLIENT_SECRET": "s", "SFAUTH_ACCESS_TOKEN": "supplied", "SF_ACCESS_TOKEN": "another's",
            "SF_INSTANCE_URL": "https://another.example", "SF_USERNAME": "another", "SFAUTH_HOME": "/h",
        ]
        var token = IssuedToken(SuppliedToken(accessToken: "t", instanceURL: nil))
        #expect(
            CommandEnvironment.forCommand(with: token, from: environment, secretVariables: ["SFAUTH_CLIENT_SECRET", "SFAUTH_ACCESS_TOKEN"])
                == ["PATH": "/bin", "SF_ACCESS_TOKEN": "t", "SFAUTH_HOME": "/h"])
        token.instanceURL = "https://i.example"
        token.username = "alice"
        #expect(
            CommandEnvironment.forCommand(with: token, from: environment, secretVariables: [])
                == [
                    "PATH": "/bin", "SF_ACCESS_TOKEN": "t", "SF_INSTANCE_URL": "https://i.example", "SF_USERNAME": "alice", "SFAUTH_HOME": "/h",
                    "SFAUTH_CLIENT_SECRET": "s", "SFAUTH_ACCESS_TOKEN": "supplied",
                ])
    }

    @Test func theCommandIsLookedUpAsAShellDoes() {
        #expect(CommandLauncher.candidates(for: "git", path: "/usr/local/bin::/usr/bin") == ["/usr/local/bin/git", "./git", "/usr/bin/git"])
        #expect(CommandLauncher.candidates(for: "./run", path: "/usr/bin") == ["./run"])
        #expect(CommandLauncher.candidates(for: "/bin/sh", path: "") == ["/bin/sh"])
        #expect((CommandLauncher.notFound, CommandLauncher.cannotRun) == (127, 126))
    }

    @Test func theEnvironmentIsReadAsProcessInfoReadsIt() {
        // Both programs read it this way (the main program's context, the front end's lookup), so
        // `exec`'s command gets the same environment from either.
        #expect(ProcessEnvironment.current() == ProcessInfo.processInfo.environment)
    }
}
