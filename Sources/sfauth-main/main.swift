import CredentialProtocols
// sfauth's main program (`sfauth-main`). People run it through the front end (`Sources/sfauth`),
// which answers the credential hot paths with a usable stored token by itself and hands every other
// command here. The one place that reads the process: its arguments and its environment.
import Dispatch
import FoundationEssentials
import SFAuthCLI

let context = CommandContext(environment: ProcessEnvironment.current())
// Run as docker-credential-sfauth (a link to this program rather than to the front end): the same.
let arguments = DockerCredential.mainProgramArguments(for: CommandLine.arguments) ?? Array(CommandLine.arguments.dropFirst())
Task { await SFAuthCommand.run(arguments, in: context) }
dispatchMain()
