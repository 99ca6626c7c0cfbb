import Glibc
import SFAuthCore

/// The proxy's Unix domain socket (`--socket PATH`): created mode 0600, never over a file that is
/// not a socket, never over a socket someone is still listening on.
enum UnixSocketListener {
    /// Binds and listens at `path`; returns the non-blocking, close-on-exec descriptor.
    ///
    /// - Throws: `OAuthError.configuration` when the path is too long, exists and is not a socket,
    ///   is a live socket, or cannot be created; `.localFault` when no socket can be made.
    static func bind(path: String) throws(OAuthError) -> Int32 {
        let shown = TerminalText.escaped(path)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !path.isEmpty, path.utf8.count < capacity, !path.utf8.contains(0) else {
            throw .configuration("--socket \(shown) is empty or longer than \(capacity - 1) bytes; choose a shorter path")
        }
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw .configuration("--socket \(shown) exists and is not a socket; refusing to replace it")
            }
            if isListening(path) {
                throw .configuration("another process is listening on --socket \(shown); stop it or choose another path")
            }
            unlink(path)  // a stale socket left by a process that died
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .localFault("cannot create a Unix socket: \(GlibcExtras.errorText(errno))") }
        fill(&address, path: path)
        // The file is created with the umask's mode: 0600 from the start, not after a chmod race.
        let previous = umask(0o177)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let bindError = errno
        umask(previous)
        guard result == 0 else {
            close(fd)
            throw .configuration("cannot create --socket \(shown): \(GlibcExtras.errorText(bindError))")
        }
        chmod(path, 0o600)
        guard listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .localFault("cannot listen on \(shown): \(GlibcExtras.errorText(code))")
        }
        return fd
    }

    /// Removes the socket file at `path` if it is still a socket (on exit).
    static func remove(path: String) {
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
    }

    private static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        fill(&address, path: path)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    private static func fill(_ address: inout sockaddr_un, path: String) {
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.initializeMemory(as: UInt8.self, repeating: 0)
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
    }
}
