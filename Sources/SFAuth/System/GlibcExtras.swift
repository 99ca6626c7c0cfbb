import Glibc

/// glibc functions and constants that Swift's Glibc module does not export (they are declared only
/// under `_GNU_SOURCE`). Looked up once by name in the already loaded C library, so the listener and
/// the browser launcher can create every file descriptor with close-on-exec set atomically.
enum GlibcExtras {
    private typealias Accept4 =
        @convention(c) (
            Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
        ) -> Int32
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    private static let accept4: Accept4? = symbol("accept4", as: Accept4.self)
    private static let pipe2: Pipe2? = symbol("pipe2", as: Pipe2.self)
    private static let addCloseFrom: AddCloseFrom? =
        symbol("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self)

    /// `POSIX_SPAWN_SETSID` from glibc's `<spawn.h>` (since 2.26): the child starts a new session,
    /// so a Ctrl-C in the terminal does not reach it.
    static let spawnSetSID: Int32 = 0x80

    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let pointer = dlsym(handle, name) else { return nil }
        return unsafeBitCast(pointer, to: type)
    }

    /// `accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)`, or `accept` + `fcntl` where
    /// `accept4` is missing. Returns the new descriptor or -1 with `errno` set.
    static func acceptCloseOnExecNonBlocking(_ fd: Int32) -> Int32 {
        if let accept4 {
            return accept4(fd, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
        }
        let connection = accept(fd, nil, nil)
        if connection >= 0 {
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
        }
        return connection
    }

    /// A pipe whose two ends are close-on-exec: `pipe2(O_CLOEXEC)`, or `pipe` + `fcntl`.
    /// Returns `(read, write)` or `nil` with `errno` set.
    static func closeOnExecPipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        if let pipe2 {
            guard pipe2(&fds, O_CLOEXEC) == 0 else { return nil }
        } else {
            guard pipe(&fds) == 0 else { return nil }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }

    /// Adds "close every descriptor from `lowest` up" to spawn file actions (glibc ≥ 2.34).
    /// Returns `false` where that is not available; the caller relies on close-on-exec alone.
    @discardableResult
    static func addCloseFrom(_ actions: inout posix_spawn_file_actions_t, lowest: Int32) -> Bool {
        guard let addCloseFrom else { return false }
        return addCloseFrom(&actions, lowest) == 0
    }

    /// The text of an `errno` value, e.g. `Connection refused`.
    static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Milliseconds on the monotonic clock.
    static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
