import Glibc
import SFAuthStore

/// Small wrappers over POSIX file calls by path — whole-file reads and atomic writes — for files
/// outside the credentials store (configuration, keys, the discovery cache, `/proc`). The store
/// itself is reached through one opened, checked descriptor (`SFAuthStore`).
/// Each throws `POSIXFile.Failure` with the call, the path and `strerror(errno)`.
package enum POSIXFile {
    package struct Failure: Error, CustomStringConvertible {
        var operation: String
        var path: String
        var code: Int32
        package var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
    }

    /// The whole file, or `nil` when it does not exist.
    package static func read(_ path: String, limit: Int = 1 << 20) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Failure(operation: "cannot open", path: path, code: errno)
        }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(operation: "cannot read", path: path, code: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit { throw Failure(operation: "file too large:", path: path, code: EFBIG) }
        }
    }

    /// Writes `bytes` to `path` so that readers see either the old or the new complete file:
    /// a new temporary file (mode 0600, `O_EXCL`) in the same directory, `fsync`, `rename`, then
    /// `fsync` of the directory so the rename itself survives a crash. `mode` is the new file's
    /// (set with `fchmod`, whatever the umask); default 0600.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, directory: String, mode: mode_t = 0o600) throws(Failure) {
        var random = SystemRandomNumberGenerator()
        let temporary = "\(directory)/.\(basename(path)).\(getpid()).\(random.next() & 0xFFFF_FFFF).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(operation: "cannot create", path: temporary, code: errno) }
        if mode != 0o600 && fchmod(fd, mode) != 0 {
            let code = errno
            close(fd)
            unlink(temporary)
            throw Failure(operation: "cannot set the mode of", path: temporary, code: code)
        }
        if let failed = Directory.writeWhole(bytes, to: fd, durably: true) {
            close(fd)
            unlink(temporary)
            throw Failure(operation: failed.operation, path: temporary, code: failed.code)
        }
        close(fd)
        if rename(temporary, path) != 0 {
            let code = errno
            unlink(temporary)
            throw Failure(operation: "cannot replace", path: path, code: code)
        }
        syncDirectory(directory)
    }

    /// Creates a directory (and missing parents) with mode 0700, and tightens an existing one to 0700.
    static func makePrivateDirectory(_ path: String) throws(Failure) {
        do {
            try StoreDirectory.makeDirectories(path)
        } catch .file(let failure) {
            throw Failure(operation: failure.operation, path: failure.path, code: failure.code)
        } catch {
            throw Failure(operation: "\(error);", path: path, code: EPERM)
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure(operation: "cannot inspect", path: path, code: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw Failure(operation: "not a directory:", path: path, code: ENOTDIR) }
        if info.st_mode & 0o077 != 0 && info.st_uid == getuid() { _ = chmod(path, 0o700) }
    }

    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    private static func basename(_ path: String) -> Substring {
        path.split(separator: "/").last ?? Substring(path)
    }
}
