/// What kind of session a program runs in, as far as showing a browser goes: a display here (X11 or
/// Wayland), an SSH session (with or without a forwarded display), Windows Subsystem for Linux
/// (where the browser is a Windows program). Read from environment variables alone, so it is a
/// pure value: the same environment always gives the same answer.
///
/// `SystemBrowserLauncher` decides by it how to open a browser; a program that embeds SFAuth can
/// decide by it what to tell the person (sfauth prints the URL and an `ssh -L` line over SSH
/// without a display).
///
/// ```swift
/// let session = SessionKind(environment: ProcessInfo.processInfo.environment)
/// if session.isRemoteWithoutDisplay { print("Open this URL on your own machine: \(url)") }
/// ```
public struct SessionKind: Sendable, Equatable {
    /// A graphical display a browser can be shown on.
    public enum Display: Sendable, Equatable, CustomStringConvertible {
        /// A Wayland compositor (`WAYLAND_DISPLAY`, e.g. `wayland-0`).
        case wayland(String)
        /// An X11 server (`DISPLAY`, e.g. `:0`, or `localhost:10.0` forwarded over SSH).
        case x11(String)

        /// E.g. `Wayland wayland-0` or `X11 :0`.
        public var description: String {
            switch self {
            case .wayland(let name): return "Wayland \(name)"
            case .x11(let name): return "X11 \(name)"
            }
        }
    }

    /// The display a browser would show on; `nil` when there is none (`WAYLAND_DISPLAY` and
    /// `DISPLAY` unset or empty). Wayland is named when both are set.
    public var display: Display?
    /// Whether this is an SSH session: `SSH_CONNECTION` or `SSH_TTY` is set.
    public var isSSH: Bool
    /// The address the SSH client connected from (the first field of `SSH_CONNECTION`), if known.
    public var sshClientAddress: String?
    /// Whether this is Windows Subsystem for Linux, where the browser is a Windows program:
    /// `WSL_DISTRO_NAME` or `WSL_INTEROP` is set.
    ///
    /// WSL sets both in every session it starts, and only there can a Windows program be run. The
    /// kernel's release (`/proc/sys/kernel/osrelease` mentions "microsoft") is not asked: a Docker
    /// Desktop container on Windows runs on that same kernel, with no Windows to open a browser in.
    public var isWSL: Bool

    /// A session described by its parts.
    public init(display: Display? = nil, isSSH: Bool = false, sshClientAddress: String? = nil, isWSL: Bool = false) {
        self.display = display
        self.isSSH = isSSH
        self.sshClientAddress = sshClientAddress
        self.isWSL = isWSL
    }

    /// The session `environment` describes (a variable set to the empty string counts as unset).
    public init(environment: [String: String]) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let display: Display? = value("WAYLAND_DISPLAY").map(Display.wayland) ?? value("DISPLAY").map(Display.x11)
        let connection = value("SSH_CONNECTION")
        self.init(
            display: display,
            isSSH: connection != nil || value("SSH_TTY") != nil,
            sshClientAddress: connection?.split(separator: " ").first.map(String.init),
            isWSL: value("WSL_DISTRO_NAME") != nil || value("WSL_INTEROP") != nil)
    }

    /// An SSH session without a forwarded display: a browser started here would show on no screen
    /// the person can see (or a text browser would take over their terminal).
    public var isRemoteWithoutDisplay: Bool { isSSH && display == nil }
}
