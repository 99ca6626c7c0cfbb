import CredentialProtocols
import Glibc

/// The absolute path of the `sfauth` people run — what kubeconfig and git configuration should call.
package enum ExecutablePath {
    /// The front end passes its own path as the first argument when it hands a command over; run
    /// directly, this program's own file (`/proc/self/exe`); else `sfauth`.
    package static func current() -> String {
        if let first = CommandLine.arguments.first, first.hasPrefix("/"), access(first, X_OK) == 0 { return first }
        return ProgramFile.path() ?? "sfauth"
    }
}
