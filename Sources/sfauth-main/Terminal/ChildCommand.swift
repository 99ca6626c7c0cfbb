import Glibc

/// Runs another program to its end, for commands that hand part of their work to one (`sfauth login`
/// for a helper's sign-in, `git config` for `setup-git`): `posix_spawn`, never a shell.
enum ChildCommand {
    /// Runs `arguments` (the first is the program: a path, or a name looked up in `PATH`) with
    /// `environment` (default: this process's) and this process's standard input and error; standard
    /// output goes to standard error when `stdoutToStderr`. Returns its exit status (128+N for signal
    /// N, 127 when it did not start).
    static func run(_ arguments: [String], environment: [String: String]? = nil, stdoutToStderr: Bool = false) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdoutToStderr { posix_spawn_file_actions_adddup2(&actions, 2, 1) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let started =
            if let envp { posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp) } else {
                posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
            }
        guard started == 0 else { return 127 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 127 }
        }
        // WIFEXITED / WEXITSTATUS: the low 7 bits are 0 for a normal exit.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
