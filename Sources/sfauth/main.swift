// The `sfauth` that people and scripts run: a small, fully static program that answers
// `sfauth token` itself when the stored token is usable (the case scripts hit over and over), and
// otherwise hands the very same command line to the main program (`sfauth-main`), as git hands
// `git foo` to `git-foo`. Everything it decides comes from SFAuthCore — the credential file format,
// the environment variables, the expiry rule — so it cannot drift from the main program; whatever it
// is not sure of, the main program answers, with its messages and exit codes.
import Glibc

if let status = CachedToken.answer(arguments: Array(CommandLine.arguments.dropFirst())) {
    exit(status)
}
MainProgram.run(CommandLine.arguments)
