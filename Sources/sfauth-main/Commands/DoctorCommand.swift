import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth doctor`: checks what a sign-in needs on this machine, one line per check, with the fix.
struct DoctorCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what a sign-in needs here: browser, display, keyring, store, clock, proxy, callback port.",
        discussion: """
            Prints one line per check — ok, note or PROBLEM — with the fix. Exits 1 when something would \
            stop a sign-in (the store cannot be used, the callback port is taken, $BROWSER names nothing \
            that exists, nothing answers at DISPLAY, the server cannot be reached); notes (no display, a \
            locked keyring, a proxy) only change how the sign-in goes. The server is the default \
            account's (or --server URL): one request, which also compares its clock with this machine's.

            Examples:
              sfauth doctor
              sfauth doctor --server https://login.salesforce.com --port 1717
            """
    )

    @Option(help: ArgumentHelp("A server whose clock to compare with this machine's. Default: the default account's.", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("The callback port to check. Default: the default account's, else 1717 (Salesforce's).", valueName: "port"))
    var port: UInt16?

    func run(in context: CommandContext) async throws {
        let facts = await DoctorFacts.gather(in: context, server: server, port: port)
        let checks = DoctorCheck.checks(facts)
        for check in checks { print(check.line) }
        if checks.contains(where: { $0.verdict == .problem }) { throw CommandFailure(silently: .storage) }
    }
}
