// The `sfauth` command. `sfauth token` with a usable stored token is answered synchronously, before
// the argument parser is set up and before Swift's concurrency runtime starts any thread: scripts call
// it constantly and it must cost a few milliseconds.
import Dispatch
import SFAuth
#if canImport(Glibc)
import Glibc
#endif

if let status = TokenCommand.runFastPath(arguments: Array(CommandLine.arguments.dropFirst())) {
    exit(status)
}
Task { await SFAuthCommand.runAndExit() }
dispatchMain()
