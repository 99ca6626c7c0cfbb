import Glibc
import SFAuth

/// What kind of session sfauth runs in, which decides how a sign-in reaches a browser: a display
/// here, an SSH session without one (print the URL, forward the port, paste the address back),
/// Windows Subsystem for Linux (the browser is a Windows program), and whether a person can type
/// on standard input.
package struct TerminalSession: Sendable, Equatable {
    /// Whether a graphical browser could be shown here (X11 or Wayland).
    package var hasDisplay: Bool
    /// Whether this is an SSH session (`SSH_CONNECTION` or `SSH_TTY`).
    package var isSSH: Bool
    /// Whether this is Windows Subsystem for Linux.
    package var isWSL: Bool
    /// Whether standard input is a terminal.
    package var standardInputIsTerminal: Bool
    /// `$BROWSER`, when set.
    package var browserVariable: String?

    /// A session described by its parts (tests).
    package init(hasDisplay: Bool = false, isSSH: Bool = false, isWSL: Bool = false, standardInputIsTerminal: Bool = false,
                 browserVariable: String? = nil) {
        self.hasDisplay = hasDisplay
        self.isSSH = isSSH
        self.isWSL = isWSL
        self.standardInputIsTerminal = standardInputIsTerminal
        self.browserVariable = browserVariable
    }

    /// This process's session, as `environment` (the library's `SessionKind`) and standard input say.
    package init(environment: [String: String]) {
        func isSet(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
        let kind = SessionKind(environment: environment)
        self.init(hasDisplay: kind.display != nil,
                  isSSH: kind.isSSH,
                  isWSL: kind.isWSL,
                  standardInputIsTerminal: isatty(0) == 1,
                  browserVariable: isSet("BROWSER") ? environment["BROWSER"] : nil)
    }

    /// An SSH session with no forwarded display: a browser started here would show nowhere.
    package var isRemoteWithoutDisplay: Bool { isSSH && !hasDisplay }
}
