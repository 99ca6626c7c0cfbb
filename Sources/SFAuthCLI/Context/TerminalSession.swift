import Glibc
import SFAuth

/// What kind of session sfauth runs in, which decides how a sign-in reaches a browser: the
/// library's `SessionKind` (a display here, SSH without one, Windows Subsystem for Linux), whether a
/// person can type on standard input, and the `$BROWSER` that `xdg-open` will run.
package struct TerminalSession: Sendable, Equatable {
    /// Display, SSH, WSL.
    package var kind: SessionKind
    /// Whether standard input is a terminal.
    package var standardInputIsTerminal: Bool
    /// `$BROWSER`, when set.
    package var browserVariable: String?

    /// A session described by its parts.
    package init(kind: SessionKind = SessionKind(), standardInputIsTerminal: Bool = false, browserVariable: String? = nil) {
        self.kind = kind
        self.standardInputIsTerminal = standardInputIsTerminal
        self.browserVariable = browserVariable
    }

    /// A session described by its answers (tests): a display is an X11 `:0`.
    package init(
        hasDisplay: Bool = false, isSSH: Bool = false, isWSL: Bool = false, standardInputIsTerminal: Bool = false,
        browserVariable: String? = nil
    ) {
        self.init(
            kind: SessionKind(display: hasDisplay ? .x11(":0") : nil, isSSH: isSSH, isWSL: isWSL),
            standardInputIsTerminal: standardInputIsTerminal, browserVariable: browserVariable)
    }

    /// This process's session, as `environment` and standard input say.
    package init(environment: [String: String]) {
        let browser = environment["BROWSER"].flatMap { $0.isEmpty ? nil : $0 }
        self.init(kind: SessionKind(environment: environment), standardInputIsTerminal: isatty(0) == 1, browserVariable: browser)
    }

    /// Whether a graphical browser could be shown here (X11 or Wayland).
    package var hasDisplay: Bool { kind.display != nil }
    /// Whether this is an SSH session.
    package var isSSH: Bool { kind.isSSH }
    /// Whether this is Windows Subsystem for Linux.
    package var isWSL: Bool { kind.isWSL }
    /// An SSH session with no forwarded display: a browser started here would show nowhere.
    package var isRemoteWithoutDisplay: Bool { kind.isRemoteWithoutDisplay }
}
