import SFAuth
import Testing

/// What kind of session the environment describes: the one answer the launcher, the progress
/// reporter and `sfauth doctor` all use.
@Suite struct SessionKindTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var environment: [String: String]
        var expected: SessionKind
        var testDescription: String { environment.isEmpty ? "nothing set" : environment.keys.sorted().joined(separator: "+") }
    }

    static let cases: [Case] = [
        Case(environment: [:], expected: SessionKind()),
        Case(environment: ["DISPLAY": ":0"], expected: SessionKind(display: .x11(":0"))),
        // Both set (XWayland): the Wayland display is the one named.
        Case(environment: ["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"], expected: SessionKind(display: .wayland("wayland-0"))),
        // An empty variable is no display (a login shell that clears it).
        Case(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""], expected: SessionKind()),
        Case(
            environment: ["SSH_CONNECTION": "203.0.113.9 52114 10.0.0.2 22"],
            expected: SessionKind(isSSH: true, sshClientAddress: "203.0.113.9")),
        Case(environment: ["SSH_TTY": "/dev/pts/3"], expected: SessionKind(isSSH: true)),
        // ssh -X: a forwarded display.
        Case(
            environment: ["SSH_CONNECTION": "203.0.113.9 52114 10.0.0.2 22", "DISPLAY": "localhost:10.0"],
            expected: SessionKind(display: .x11("localhost:10.0"), isSSH: true, sshClientAddress: "203.0.113.9")),
        Case(environment: ["WSL_DISTRO_NAME": "Ubuntu"], expected: SessionKind(isWSL: true)),
        Case(environment: ["WSL_INTEROP": "/run/WSL/8_interop"], expected: SessionKind(isWSL: true)),
        Case(environment: ["WSL_DISTRO_NAME": ""], expected: SessionKind()),
    ]

    @Test(arguments: cases)
    func theEnvironmentSaysWhatKindOfSessionThisIs(_ testCase: Case) {
        #expect(SessionKind(environment: testCase.environment) == testCase.expected)
    }

    @Test func onlyAnSSHSessionWithoutADisplayIsRemoteWithoutOne() {
        #expect(SessionKind(isSSH: true).isRemoteWithoutDisplay)
        #expect(!SessionKind(display: .x11("localhost:10.0"), isSSH: true).isRemoteWithoutDisplay)
        #expect(!SessionKind().isRemoteWithoutDisplay)  // at the machine's own console, no desktop
    }

    @Test func theDisplayIsNamedForPeople() {
        #expect(SessionKind.Display.wayland("wayland-0").description == "Wayland wayland-0")
        #expect(SessionKind.Display.x11(":1").description == "X11 :1")
    }
}
