import FoundationEssentials
import SFAuth
import Testing

@testable import SFAuthCLI

/// `sfauth doctor`'s verdicts, as values: facts in, lines out.
@Suite struct DoctorCheckTests {
    static func facts(
        session: TerminalSession = TerminalSession(hasDisplay: true), opener: String? = "/usr/bin/xdg-open",
        keyring: SecretServiceAvailability = .available, store: DoctorFacts.Store = .usable(directory: "/h/s"),
        port: DoctorFacts.Port = .free(1717), proxies: [String] = [], clock: DoctorFacts.Clock = .offset(url: "https://s", seconds: 2)
    )
        -> DoctorFacts
    {
        DoctorFacts(
            session: session, opener: opener, keyring: keyring, store: store,
            port: port, proxies: proxies, clock: clock)
    }

    @Test func aHealthyDesktopIsAllOK() {
        let checks = DoctorCheck.checks(Self.facts())
        #expect(checks.map(\.name) == ["display", "browser", "keyring", "store", "port", "proxy", "clock"])
        #expect(checks.allSatisfy { $0.verdict == .ok })
        #expect(checks.first?.line == "ok      display  a display is available (X11 :0)")
        #expect(checks.last?.text == "this machine is 2 s ahead of https://s")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var facts: DoctorFacts
        var name: String
        var verdict: DoctorCheck.Verdict
        var text: String
        var testDescription: String { "\(name): \(verdict.rawValue)" }
    }

    @Test(arguments: [
        Case(
            facts: facts(session: TerminalSession()), name: "display", verdict: .note,
            text:
                "no display (DISPLAY and WAYLAND_DISPLAY are unset): sign-in prints the URL; paste the address back, forward the port, or use --device"
        ),
        Case(
            facts: facts(session: TerminalSession(isWSL: true)), name: "display", verdict: .note,
            text: "WSL: the Windows browser opens through $BROWSER or wslview; if none does, open the printed URL yourself"),
        Case(
            facts: facts(session: TerminalSession()), name: "browser", verdict: .note,
            text: "/usr/bin/xdg-open opens the browser, but needs a display or $BROWSER"),
        Case(
            facts: facts(session: TerminalSession(browserVariable: "w3m"), opener: nil), name: "browser", verdict: .ok,
            text: "$BROWSER is w3m (xdg-open is not installed)"),
        Case(
            facts: facts(opener: nil), name: "browser", verdict: .note,
            text: "xdg-open is not installed (Debian package xdg-utils) and $BROWSER is unset: give --browser-command or open the URL yourself"),
        Case(
            facts: facts(keyring: .unavailable(reason: "the keyring is locked")), name: "keyring", verdict: .note,
            text: "the keyring is locked: refresh tokens go to 0600 files (--storage file), or unlock/start a keyring"),
        Case(
            facts: facts(store: .missing(directory: "/h/s")), name: "store", verdict: .ok,
            text: "/h/s does not exist yet; the first sign-in creates it (mode 0700)"),
        Case(
            facts: facts(store: .notWritable(directory: "/h/s", reason: "Permission denied")), name: "store", verdict: .problem,
            text: "/h/s cannot be written (Permission denied); nothing could be stored"),
        Case(facts: facts(store: .refused("/h/s is a symbolic link")), name: "store", verdict: .problem, text: "/h/s is a symbolic link"),
        Case(
            facts: facts(port: .inUse(1717, holder: "sf (pid 12)")), name: "port", verdict: .problem,
            text: "port 1717 is in use, held by sf (pid 12): probably another sign-in (sfauth or sf) is waiting on it; finish or cancel it"),
        Case(facts: facts(port: .anyFree), name: "port", verdict: .ok, text: "the default account's sign-in picks a free port"),
        Case(
            facts: facts(proxies: ["https_proxy"]), name: "proxy", verdict: .note,
            text: "https_proxy set (no_proxy: unset); requests to the server go through it, loopback ones never do"),
        Case(
            facts: facts(clock: .offset(url: "https://s", seconds: -90.4)), name: "clock", verdict: .problem,
            text: "this machine is 90 s behind https://s: tokens and assertions will be refused; set the clock (timedatectl set-ntp true)"),
        Case(
            facts: facts(clock: .noServer), name: "clock", verdict: .note, text: "no server to compare with (no default account); give --server URL"),
        Case(
            facts: facts(clock: .unreachable(url: "https://s", reason: "could not connect")), name: "clock", verdict: .problem,
            text: "could not reach https://s: could not connect; a sign-in there would fail the same way"),
        Case(
            facts: DoctorFacts(
                session: TerminalSession(browserVariable: "nosuch-browser"), browserFound: false, keyring: .available,
                store: .usable(directory: "/h/s"), port: .anyFree, clock: .noServer),
            name: "browser", verdict: .problem, text: "$BROWSER is nosuch-browser, which cannot be found: fix it, or unset it"),
        Case(
            facts: DoctorFacts(
                session: TerminalSession(hasDisplay: true), displayAnswers: false, keyring: .available,
                store: .usable(directory: "/h/s"), port: .anyFree, clock: .noServer),
            name: "display", verdict: .problem,
            text:
                "X11 :0 is set, but nothing answers there: a browser cannot open on it; start the display, or unset the variable to get the URL printed"
        ),
        Case(facts: facts(clock: .noDate(url: "https://s")), name: "clock", verdict: .note, text: "https://s sent no usable Date header"),
    ])
    func verdicts(_ example: Case) throws {
        let check = try #require(DoctorCheck.checks(example.facts).first { $0.name == example.name })
        #expect(check.verdict == example.verdict)
        #expect(check.text == example.text)
    }

    @Test func anSSHSessionGetsItsOwnLine() {
        let facts = Self.facts(session: TerminalSession(kind: SessionKind(isSSH: true, sshClientAddress: "192.0.2.7")))
        let checks = DoctorCheck.checks(facts)
        #expect(checks.map(\.name).firstIndex(of: "ssh") == 2)
        #expect(checks[2].text.hasPrefix("connected over SSH from 192.0.2.7: "))
    }
}

/// The `Date` header of a server is outside data: any text is a date or `nil`, never a trap.
@Suite struct HTTPDateTests {
    @Test func anIMFFixdate() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 26 Nov 2026 19:53:34 GMT") == Date(timeIntervalSince1970: 1_795_722_814))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT") == Date(timeIntervalSince1970: 951_782_400))
    }

    @Test(arguments: [
        "Sun, 06 Nov 99999999999 08:49:37 GMT",  // the year that trapped sfauth doctor (Int32 overflow)
        "Sun, 06 Nov -1994 08:49:37 GMT", "Sun, 99 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
        "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sunday, 06-Nov-94 08:49:37 GMT", "",
        "Sun, 06 Xyz 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:99999999999999999999 GMT",
    ])
    func anythingElseIsNotADate(_ text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
