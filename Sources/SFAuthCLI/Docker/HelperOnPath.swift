import CredentialProtocols
import Glibc

/// Whether Docker can run `docker-credential-sfauth`: clients look it up in their `PATH`, and a
/// helper they cannot find makes every pull from the registry fail.
package enum HelperOnPath {
    /// What to say when no `docker-credential-sfauth` is on `PATH`, or the one found is not this
    /// sfauth; `nil` when it is.
    ///
    /// - Parameters:
    ///   - environment: the process environment (its `PATH`).
    ///   - executablePath: the `sfauth` people run (`CommandContext.executablePath`), which the
    ///     link should point at.
    package static func warning(environment: [String: String], executablePath: String) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let found = CommandLauncher.candidates(for: DockerCredential.programName, path: path).first { access($0, X_OK) == 0 }
        let fix =
            "ln -s \(GitCredential.shellQuoted(executablePath)) ~/.local/bin/\(DockerCredential.programName) (or into another directory on your PATH)"
        guard let found else {
            return "sfauth: warning: there is no \(DockerCredential.programName) on your PATH, so Docker cannot run it; link it: \(fix)."
        }
        guard let helper = realPath(found), let sfauth = realPath(executablePath), helper != sfauth else { return nil }
        return "sfauth: warning: \(found) is not this sfauth (it is \(helper)); link it: \(fix)."
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
