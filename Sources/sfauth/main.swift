// The `sfauth` command. `sfauth token` (without options) is answered before the argument parser is
// even set up: scripts call it constantly and it must cost a few milliseconds.
import SFAuth
#if canImport(Glibc)
import Glibc
#endif

if let status = await TokenCommand.runFastPath(arguments: Array(CommandLine.arguments.dropFirst())) {
    exit(status)
}
await SFAuthCommand.runAndExit()
