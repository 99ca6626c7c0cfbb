import Glibc

/// Starts a browser command with `posix_spawn` (never through a shell) and waits a little for it.
///
/// The child gets its own session (a Ctrl-C in the terminal does not reach it), default signal
/// dispositions and an empty signal mask, `/dev/null` as stdin and stdout (our stdout is an API),
/// and a pipe as stderr so its last line can explain a failure. It inherits no other descriptor.
enum BrowserProcess {
    /// `posix_spawn` failed with this `errno`.
    struct SpawnFailure: Error {
        var code: Int32
    }

    /// How the child ended, as far as we waited.
    enum Status: Equatable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal killed it.
        case signalled(Int32)
        /// Still running at the end of the wait: left to a background reaper.
        case running
        /// It could not be waited for (someone else reaped it).
        case unknown
    }

    /// The status and the child's last non-empty stderr line, if any.
    struct Result {
        var status: Status
        var lastErrorLine: String?
    }

    /// Runs `executable` (a path) with `arguments` (`arguments[0]` is the program name) and waits up
    /// to `waitMilliseconds` for it to exit.
    static func run(
        executable: String, arguments: [String], environment: [String: String], waitMilliseconds: Int64
    ) throws(SpawnFailure) -> Result {
        guard let errorPipe = GlibcExtras.closeOnExecPipe() else { throw SpawnFailure(code: errno) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, errorPipe.write, 2)
        // Everything of ours is close-on-exec already; this also covers descriptors that some other
        // part of the host program opened without it.
        GlibcExtras.addCloseFrom(&actions, lowest: 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(
            &attributes,
            Int16(GlibcExtras.spawnSetSID | Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        var result: Int32 = 0
        for attempt in 1...5 {
            result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
            // ETXTBSY: the file was just written and some process forked meanwhile still holds it
            // open for writing until its own exec. That passes in moments.
            guard result == ETXTBSY, attempt < 5 else { break }
            usleep(UInt32(attempt) * 20_000)
        }
        close(errorPipe.write)
        guard result == 0 else {
            close(errorPipe.read)
            throw SpawnFailure(code: result)
        }
        return wait(for: pid, errorPipe: errorPipe.read, milliseconds: waitMilliseconds)
    }

    private static func wait(for pid: pid_t, errorPipe: Int32, milliseconds: Int64) -> Result {
        _ = fcntl(errorPipe, F_SETFL, fcntl(errorPipe, F_GETFL) | O_NONBLOCK)
        let deadline = GlibcExtras.monotonicMilliseconds() + milliseconds
        var tail: [UInt8] = []
        var pipeOpen = true
        var interval: Int64 = 1
        var status: Status

        while true {
            var raw: Int32 = 0
            let waited = waitpid(pid, &raw, WNOHANG)
            if waited == pid {
                status = decode(raw)
                break
            }
            if waited < 0, errno != EINTR {
                status = .unknown
                break
            }
            let now = GlibcExtras.monotonicMilliseconds()
            if now >= deadline {
                status = .running
                break
            }
            // Sleep in poll on the stderr pipe: output is collected as it comes.
            let timeout = Int32(min(interval, deadline - now))
            interval = min(interval * 2, 25)
            if pipeOpen {
                var entry = pollfd(fd: errorPipe, events: Int16(POLLIN), revents: 0)
                if poll(&entry, 1, timeout) > 0 { pipeOpen = readAvailable(errorPipe, into: &tail) }
            } else {
                _ = poll(nil, 0, timeout)
            }
        }
        if pipeOpen { pipeOpen = readAvailable(errorPipe, into: &tail) }

        let line = lastLine(of: tail)
        if status == .running || pipeOpen {
            // A child still running, or a grandchild (the browser) still holding stderr: drain and
            // reap in the background, so nobody blocks and no write to stderr ever meets a closed pipe.
            BackgroundReaper.start(pid: status == .running ? pid : nil, errorPipe: pipeOpen ? errorPipe : -1)
        } else {
            close(errorPipe)
        }
        return Result(status: status, lastErrorLine: line)
    }

    /// Reads what the pipe holds now. Returns `false` at end of file (or on an error).
    private static func readAvailable(_ fd: Int32, into tail: inout [UInt8]) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 {
                tail.append(contentsOf: buffer[0..<count])
                if tail.count > 8192 { tail.removeFirst(tail.count - 4096) }
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return true }
            return false
        }
    }

    /// The last non-empty line, trimmed (at most the last 4 KiB of output were kept).
    private static func lastLine(of bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
        guard let last = lines.last(where: { !$0.allSatisfy(\.isWhitespace) }) else { return nil }
        var line = String(last.drop(while: \.isWhitespace))
        while let final = line.last, final.isWhitespace { line.removeLast() }
        return line
    }

    /// `WIFEXITED`/`WEXITSTATUS`/`WTERMSIG`, which Swift does not import (they are macros).
    private static func decode(_ raw: Int32) -> Status {
        let signal = raw & 0x7F
        if signal == 0 { return .exited((raw >> 8) & 0xFF) }
        if signal != 0x7F { return .signalled(signal) }
        return .unknown
    }
}

/// Waits for a child that outlived `BrowserProcess`'s wait, and drains a stderr pipe that a
/// grandchild may keep open, on a small detached thread.
private final class BackgroundReaper {
    private var pid: pid_t?
    private var errorPipe: Int32

    private init(pid: pid_t?, errorPipe: Int32) {
        self.pid = pid
        self.errorPipe = errorPipe
    }

    static func start(pid: pid_t?, errorPipe: Int32) {
        let reaper = BackgroundReaper(pid: pid, errorPipe: errorPipe)
        do {
            try DetachedThread.start { reaper.run() }
        } catch {
            // No thread: give up on the pipe (the child may see EPIPE) and leave the zombie to exit.
            if errorPipe >= 0 { close(errorPipe) }
        }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pid != nil || errorPipe >= 0 {
            if errorPipe >= 0 {
                var entry = pollfd(fd: errorPipe, events: Int16(POLLIN), revents: 0)
                if poll(&entry, 1, pid == nil ? -1 : 1000) > 0 {
                    while true {
                        let count = read(errorPipe, &buffer, buffer.count)
                        if count > 0 { continue }
                        if count < 0, errno == EINTR { continue }
                        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { break }
                        close(errorPipe)
                        errorPipe = -1
                        break
                    }
                }
            } else {
                _ = poll(nil, 0, 1000)
            }
            if let child = pid {
                var raw: Int32 = 0
                let waited = waitpid(child, &raw, WNOHANG)
                if waited == child || (waited < 0 && errno != EINTR) { pid = nil }
            }
        }
    }
}
