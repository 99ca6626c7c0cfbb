import CredentialProtocols
// sfauth's main program (`sfauth-main`). People run it through the front end (`Sources/sfauth`),
// which answers the credential hot paths with a usable stored token by itself and hands every other
// command here. The one place that reads the process: its arguments and its environment.
import Dispatch
import FoundationEssentials
import SFAuthCLI

let context = CommandContext(environment: ProcessEnvironment.current())
Task { await SFAuthCommand.run(Array(CommandLine.arguments.dropFirst()), in: context) }
dispatchMain()
