import Glibc
import SFAuthModel

/// A directory opened once, with everything in it reached through that descriptor (`openat`,
/// `fstatat`, `renameat`, `unlinkat`, `mkdirat`) and never by path again, without following a
/// symbolic link at any step. What is read or written is in the directory that was opened — and
/// checked, for the store (`StoreDirectory`) — whatever happens to its path meanwhile: a path
/// checked once and then used again can name another directory by the time it is used (issue 17:
/// a store swapped in a loop handed out an attacker's token). `path` only names it in messages.
package final class Directory: Sendable {
    /// The path it was opened by, for messages.
    package let path: String
    /// The open descriptor (`O_RDONLY | O_DIRECTORY`), closed with this value.
    package let descriptor: Int32

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Opens the directory at `path`; `nil` when there is none. A symbolic link as its last
    /// component is not followed (`ELOOP`); earlier components are (they are the caller's to trust).
    package static func open(_ path: String) throws(FileFailure) -> Directory? {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw FileFailure(operation: "cannot open", path: path, code: errno)
        }
        return Directory(descriptor: fd, path: path)
    }

    /// The path of `name` in this directory, for messages.
    package func child(_ name: String) -> String { path + "/" + name }

    // MARK: - Subdirectories

    /// The subdirectory `name`, opened the same way; `nil` when there is none.
    package func subdirectory(_ name: String) throws(FileFailure) -> Directory? {
        let fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw FileFailure(operation: "cannot open", path: child(name), code: errno)
        }
        return Directory(descriptor: fd, path: child(name))
    }

    /// The subdirectory `name`, created (0700) when missing, and tightened to 0700 (`tighten()`).
    package func privateSubdirectory(_ name: String) throws(FileFailure) -> Directory {
        if mkdirat(descriptor, name, 0o700) != 0 && errno != EEXIST {
            throw FileFailure(operation: "cannot create directory", path: child(name), code: errno)
        }
        guard let directory = try subdirectory(name) else {
            throw FileFailure(operation: "cannot open", path: child(name), code: ENOENT)
        }
        try directory.tighten()
        return directory
    }

    /// Takes group and other permissions away from a directory of this user that has them
    /// (created under a loose umask, or by an older program); another user's is left alone.
    package func tighten() throws(FileFailure) {
        let info = try status()
        if info.st_mode & 0o077 != 0 && info.st_uid == getuid() { _ = fchmod(descriptor, 0o700) }
    }

    /// `fstat` of the directory itself.
    package func status() throws(FileFailure) -> stat {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileFailure(operation: "cannot inspect", path: path, code: errno) }
        return info
    }

    // MARK: - Reading

    /// The whole file `name`; `nil` when there is none. A symbolic link is not followed, and a file
    /// larger than `limit` (1 MiB: more than the store ever writes) is refused.
    package func read(_ name: String, limit: Int = 1 << 20) throws(FileFailure) -> [UInt8]? {
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw FileFailure(operation: "cannot open", path: child(name), code: errno)
        }
        defer { close(fd) }
        // Read into an array the size `fstat` says (one byte more, to meet the end in the same
        // read), not through a zeroed chunk: `sfauth accounts` reads thousands of these files.
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        guard size <= limit else { throw FileFailure(operation: "file too large:", path: child(name), code: EFBIG) }
        // A regular file is read whole by one read short of the buffer; anything else until its end.
        let regular = info.st_mode & S_IFMT == S_IFREG
        var code: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: size + 1) { buffer, count in
            count = 0
            while count < buffer.count {
                let got = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { code = errno }
                if got <= 0 { return }
                count += got
                if regular { return }
            }
        }
        // A file that grew since `fstat`: the rest in chunks.
        while code == 0 && bytes.count == size + 1 {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { code = errno }
            if got <= 0 { break }
            bytes += chunk[0..<got]
            guard bytes.count <= limit else { throw FileFailure(operation: "file too large:", path: child(name), code: EFBIG) }
        }
        guard code == 0 else { throw FileFailure(operation: "cannot read", path: child(name), code: code) }
        guard bytes.count <= limit else { throw FileFailure(operation: "file too large:", path: child(name), code: EFBIG) }
        return bytes
    }

    /// Whether `name` exists here (`fstatat`, not following a symbolic link).
    package func contains(_ name: String) -> Bool {
        var info = stat()
        return fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// The modification time of `name` here (`fstatat`, not following a symbolic link); `nil` when
    /// there is none or it cannot be inspected.
    package func modificationTime(of name: String) -> timespec? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return info.st_mtim
    }

    /// The names of the entries, without `.` and `..`, in the order the directory gives them.
    package func names() throws(FileFailure) -> [String] {
        // A descriptor of its own (not a dup, which would share the reading position).
        let fd = openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let stream = fdopendir(fd) else {
            let code = errno
            if fd >= 0 { close(fd) }
            throw FileFailure(operation: "cannot list", path: path, code: code)
        }
        defer { closedir(stream) }
        var names = [String]()
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    // MARK: - Writing

    /// Writes `bytes` to `name` so that readers see either the old or the new complete file: a new
    /// temporary file here (0600, `O_EXCL`), `fsync`, `renameat` over `name`, then `fsync` of this
    /// directory so that the rename itself survives a crash. `durably: false` leaves out both
    /// `fsync`s (for what can be rebuilt, such as the name index).
    package func writeAtomically(_ bytes: [UInt8], to name: String, durably: Bool = true) throws(FileFailure) {
        var random = SystemRandomNumberGenerator()
        let temporary = ".\(name).\(getpid()).\(random.next() & 0xFFFF_FFFF).tmp"
        let fd = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileFailure(operation: "cannot create", path: child(temporary), code: errno) }
        if let failed = Self.writeWhole(bytes, to: fd, durably: durably) {
            close(fd)
            unlinkat(descriptor, temporary, 0)
            throw FileFailure(operation: failed.operation, path: child(temporary), code: failed.code)
        }
        close(fd)
        if renameat(descriptor, temporary, descriptor, name) != 0 {
            let code = errno
            unlinkat(descriptor, temporary, 0)
            throw FileFailure(operation: "cannot replace", path: child(name), code: code)
        }
        if durably { sync() }
    }

    /// Writes all of `bytes` to the open file `fd` — again after a short write or `EINTR` — and
    /// `fsync`s it when `durably`; `nil` when that worked, else what failed (`cannot write`,
    /// `cannot sync`) and `errno`. The one write loop of the store and of `POSIXFile`.
    package static func writeWhole(_ bytes: [UInt8], to fd: Int32, durably: Bool) -> (operation: String, code: Int32)? {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                return ("cannot write", errno)
            }
            written += count
        }
        if durably && fsync(fd) != 0 { return ("cannot sync", errno) }
        return nil
    }

    /// Sets the modification (and access) time of the file `name` to `time`, creating it empty
    /// (0600, not following a symbolic link) when missing: a marker whose time is what it records.
    package func touch(_ name: String, at time: timespec) throws(FileFailure) {
        let fd = openat(descriptor, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileFailure(operation: "cannot create", path: child(name), code: errno) }
        defer { close(fd) }
        var times = [time, time]
        guard futimens(fd, &times) == 0 else { throw FileFailure(operation: "cannot set the time of", path: child(name), code: errno) }
    }

    /// Removes the file `name`; no error when there is none. Synced, like a write.
    package func remove(_ name: String) throws(FileFailure) {
        if unlinkat(descriptor, name, 0) != 0 && errno != ENOENT {
            throw FileFailure(operation: "cannot remove", path: child(name), code: errno)
        }
        sync()
    }

    /// Renames `name` to `newName`, both in this directory.
    package func rename(_ name: String, to newName: String) throws(FileFailure) {
        if renameat(descriptor, name, descriptor, newName) != 0 {
            throw FileFailure(operation: "cannot rename", path: child(name), code: errno)
        }
    }

    /// Removes the subdirectory `name` and the files in it (one level: what the store puts in its
    /// subdirectories). Best effort.
    package func removeSubdirectory(_ name: String) {
        if let directory = try? subdirectory(name), let names = try? directory.names() {
            for entry in names { unlinkat(directory.descriptor, entry, 0) }
        }
        unlinkat(descriptor, name, AT_REMOVEDIR)
    }

    /// Removes temporary files that `writeAtomically` left here when its process died mid-write
    /// (their names carry the writer's pid). Best effort: errors are ignored.
    package func removeOrphanedTemporaryFiles() {
        guard let names = try? names() else { return }
        for name in names {
            let parts = name.split(separator: ".")
            guard name.hasPrefix("."), name.hasSuffix(".tmp"), parts.count >= 4,
                let pid = pid_t(parts[parts.count - 3]), pid != getpid()
            else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlinkat(descriptor, name, 0) }
        }
    }

    /// `fsync` of the directory: the names written, renamed and removed in it survive a crash.
    package func sync() {
        fsync(descriptor)
    }

    /// Sets the directory's modification (and access) time to `time`.
    package func setModificationTime(_ time: timespec) throws(FileFailure) {
        var times = [time, time]
        guard futimens(descriptor, &times) == 0 else {
            throw FileFailure(operation: "cannot set the time of", path: path, code: errno)
        }
    }

    // MARK: - Locks

    /// Opens (creating it 0600 when missing) the lock file `name`, not following a symbolic link.
    /// The lock is on a separate file because `rename` replaces the data files' inodes.
    package func openLockFile(_ name: String) throws(FileFailure) -> Int32 {
        let fd = openat(descriptor, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileFailure(operation: "cannot open lock file", path: child(name), code: errno) }
        return fd
    }

    /// Runs `body` holding an exclusive `flock` on the lock file `name`, released when the
    /// descriptor closes (also when the process dies).
    package func withExclusiveLock<T, E: Error>(_ name: String, _ body: () throws(E) -> T) throws(FileFailure) -> Result<T, E> {
        let fd = try openLockFile(name)
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw FileFailure(operation: "cannot lock", path: child(name), code: errno) }
        }
        do { return .success(try body()) } catch { return .failure(error) }
    }
}
