// The `sfauth` that people, scripts and other tools run: a small, fully static program that answers
// the credential hot paths itself when the stored token is usable — `sfauth token`,
// `kube-credential` (kubectl runs it for every command), `git-credential get` (git, for every fetch
// and push) and `exec` — and otherwise hands the very same command line to the main program
// (`sfauth-main`), as git hands `git foo` to `git-foo`. What it decides comes from the targets the
// main program uses too — the store and its one stored-token lookup (SFAuthStore), the output
// formats (CredentialProtocols), the rules (SFAuthModel) — so it cannot drift from the main program;
// whatever it is not sure of, the main program answers, with its messages and exit codes.
//
// Run as `docker-credential-sfauth OPERATION` (a link, which Docker clients find by that name), it
// is `sfauth docker-credential OPERATION`.
import CredentialProtocols
import Glibc

let arguments = DockerCredential.mainProgramArguments(for: CommandLine.arguments) ?? Array(CommandLine.arguments.dropFirst())
var standardInput: [UInt8]?
if let status = HotPath.answer(arguments, standardInput: &standardInput) {
    exit(status)
}
MainProgram.run([CommandLine.arguments.first ?? "sfauth"] + arguments, standardInput: standardInput)
