import Glibc

/// Opens URLs with `xdg-open` (which honours `$BROWSER`), `$BROWSER` itself when `xdg-open` is not
/// installed, or an explicit command (`--browser-command`).
///
/// The command is started with `posix_spawn`, never through a shell: the URL is always exactly
/// one argument. The child runs in its own session, with `/dev/null` as stdin and stdout and no
/// descriptor of ours but a stderr pipe. `open` waits up to ``startupWait`` for the command to exit:
/// status 0 means opened, another status throws with the command's last stderr line, and a command
/// still running then (a browser started in the foreground) counts as opened and is reaped in the
/// background.
public struct SystemBrowserLauncher: BrowserLauncher {
    /// The argv prefix to run instead of `xdg-open` (from `--browser-command`); the URL replaces an
    /// `%s` wherever it appears in an argument (`--app=%s`), or is appended. `nil` (default): `xdg-open`, else `$BROWSER`.
    public var command: [String]?
    /// The environment given to the command and used to find it (`PATH`, `BROWSER`, `DISPLAY` …).
    /// Default: this process's environment.
    public var environment: [String: String]
    /// How long `open` waits for the command to exit before assuming the browser is running.
    /// Default: 5 s.
    public var startupWait: Duration

    /// Creates a launcher.
    ///
    /// - Parameters:
    ///   - command: `nil` to run `xdg-open URL` (falling back to `$BROWSER`, a colon-separated list of
    ///     commands with `%s` replaced by the URL, else the URL appended); otherwise an argv prefix,
    ///     e.g. from ``splitCommandLine(_:)``, with the URL appended or substituted for `%s`.
    ///   - environment: the environment for the command; default: this process's environment. Leave
    ///     out the variables that hold your program's secrets (`ChildEnvironment.without(_:in:)`).
    public init(command: [String]? = nil, environment: [String: String] = SystemBrowserLauncher.processEnvironment()) {
        self.command = command
        self.environment = environment
        self.startupWait = .seconds(5)
    }

    /// This process's environment variables, read from `environ`.
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = start else { return result }
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                if result[name] == nil { result[name] = String(text[text.index(after: equals)...]) }
            }
            entry += 1
        }
        return result
    }

    /// Opens `url` in the browser.
    ///
    /// - Throws: `BrowserLaunchError`, e.g. `xdg-open exited with status 3 (no method available for
    ///   opening '…')` or `xdg-open is not installed (Debian package xdg-utils); use
    ///   --browser-command or open the URL yourself`.
    public func open(_ url: String) throws {
        if let command {
            guard let program = command.first, !program.isEmpty else {
                throw BrowserLaunchError(message: "the browser command is empty")
            }
            var arguments = command.map { $0.replacing("%s", with: url) }
            if !command.contains(where: { $0.contains("%s") }) { arguments.append(url) }
            try run(
                arguments, name: program,
                notFound:
                    "the browser command '\(program)' was not found; check it, or open the URL yourself")
            return
        }

        if SessionKind(environment: environment).isWSL && (environment["BROWSER"] ?? "").isEmpty {
            try openInWindows(url)
            return
        }

        if let xdgOpen = findExecutable("xdg-open") {
            try run([xdgOpen, url], name: "xdg-open", executable: xdgOpen, notFound: Self.xdgOpenMissing)
            return
        }

        // No xdg-open: do what it would do without a desktop, with $BROWSER.
        let entries = (environment["BROWSER"] ?? "").split(separator: ":").map(String.init)
            .filter { !$0.allSatisfy(\.isWhitespace) }
        guard !entries.isEmpty else { throw BrowserLaunchError(message: Self.xdgOpenMissing) }
        var failures: [String] = []
        for entry in entries {
            do {
                var arguments = try splitCommandLine(entry)
                guard let program = arguments.first else { continue }
                if entry.contains("%s") {
                    arguments = arguments.map { $0.replacing("%s", with: url) }
                } else {
                    arguments.append(url)
                }
                try run(arguments, name: program, notFound: "'\(program)' from $BROWSER was not found")
                return
            } catch {
                failures.append("\(error)")
            }
        }
        throw BrowserLaunchError(
            message:
                "xdg-open is not installed (Debian package xdg-utils) and no command in $BROWSER worked ("
                + failures.joined(separator: "; ") + "); name another browser command, or open the URL yourself")
    }

    /// WSL without `$BROWSER`: `wslview` (wslu), else PowerShell's `Start-Process`, else `cmd.exe
    /// /c start` — each gets the URL as one argument (cmd.exe sees `&` as a command separator, so
    /// there it is escaped with `^`).
    private func openInWindows(_ url: String) throws {
        var failures: [String] = []
        let attempts: [(name: String, arguments: [String])] = [
            ("wslview", ["wslview", url]),
            (
                "powershell.exe",
                [
                    "powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
                    "Start-Process '\(url.replacing("'", with: "''"))'",
                ]
            ),
            ("cmd.exe", ["cmd.exe", "/c", "start", "\"\"", url.replacing("&", with: "^&")]),
        ]
        for attempt in attempts where findExecutable(attempt.name) != nil {
            do {
                try run(attempt.arguments, name: attempt.name, notFound: "\(attempt.name) was not found")
                return
            } catch {
                failures.append("\(error)")
            }
        }
        throw BrowserLaunchError(
            message: "no Windows browser could be opened from WSL ("
                + (failures.isEmpty ? "wslview, powershell.exe and cmd.exe are not on the PATH" : failures.joined(separator: "; "))
                + "); install wslu, or set BROWSER")
    }

    private static let xdgOpenMissing =
        "xdg-open is not installed (Debian package xdg-utils); name another browser command, or open the URL yourself"

    private func run(_ arguments: [String], name: String, executable: String? = nil, notFound: String) throws {
        guard let path = executable ?? findExecutable(arguments[0]) else {
            throw BrowserLaunchError(message: notFound)
        }
        let (seconds, attoseconds) = startupWait.components
        let milliseconds = max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        let result: BrowserProcess.Result
        do {
            result = try BrowserProcess.run(
                executable: path, arguments: arguments, environment: environment,
                waitMilliseconds: milliseconds)
        } catch {
            switch error.code {
            case ENOENT: throw BrowserLaunchError(message: notFound)
            case EACCES: throw BrowserLaunchError(message: "'\(path)' is not executable (permission denied)")
            default: throw BrowserLaunchError(message: "cannot start \(name): \(GlibcExtras.errorText(error.code))")
            }
        }
        let detail =
            result.lastErrorLine.map { line -> String in
                // xdg-open prefixes its messages with its own name, and quotes the URL, which the user is
                // shown anyway right after this message: once is enough.
                let prefix = "\(name): "
                var text = line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : line
                for argument in arguments.dropFirst() where argument.contains("://") { text = text.replacing(argument, with: "the URL") }
                return " (" + text + ")"
            } ?? ""
        switch result.status {
        case .exited(0), .running, .unknown:
            return
        case .exited(let status):
            throw BrowserLaunchError(message: "\(name) exited with status \(status)\(detail)")
        case .signalled(let signal):
            throw BrowserLaunchError(message: "\(name) was killed by signal \(signal)\(detail)")
        }
    }

    /// Looks `name` up in the `PATH` of ``environment`` (a name containing `/` is used as is).
    private func findExecutable(_ name: String) -> String? {
        if name.contains("/") { return name }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var info = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                return candidate
            }
        }
        return nil
    }
}
