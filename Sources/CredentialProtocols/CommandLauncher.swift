import Glibc
import SFAuthModel

/// Becomes `sfauth exec`'s command: the process is replaced (`execve`), so the exit status and every
/// signal are the command's own. Used by the front end and the main program alike.
package enum CommandLauncher {
    /// The exit status when the command is not found (as a shell says it): 127.
    package static let notFound: Int32 = 127
    /// The exit status when it is found but cannot be run (permissions, format): 126.
    package static let cannotRun: Int32 = 126

    /// Replaces this process with `arguments` (looked up in the `PATH` of `environment`, as a shell
    /// does) run with `environment`; returns only to exit, with one line on standard error, when it
    /// cannot start.
    ///
    /// - Precondition: `arguments` is not empty.
    package static func become(_ arguments: [String], environment: [String: String]) -> Never {
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        // This thread's blocked signals and anything set to be ignored would carry over into the
        // command: it gets the signal state a shell would give it.
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE] { signal(number, SIG_DFL) }
        var code = ENOENT
        for candidate in candidates(for: arguments[0], path: environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin") {
            execve(candidate, argv, envp)
            // Keep looking past a directory where it is missing; remember any other reason.
            if errno != ENOENT && errno != ENOTDIR { code = errno }
        }
        let line = "sfauth: cannot run \(TerminalText.escaped(arguments[0])): \(String(cString: strerror(code))).\n"
        let bytes = Array(TerminalText.escaped(line, keepingNewlines: true).utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(code == ENOENT ? notFound : cannotRun)
    }

    /// Where a shell would look for `name`: the name itself when it has a `/`, else each entry of
    /// `path` (an empty entry is the current directory).
    package static func candidates(for name: String, path: String) -> [String] {
        if name.contains("/") { return [name] }
        return path.split(separator: ":", omittingEmptySubsequences: false).map { ($0.isEmpty ? "." : String($0)) + "/" + name }
    }
}
