import Glibc
import SFAuthModel

/// The credentials directory, opened once per operation and checked on that descriptor: it must be
/// a directory (not a symbolic link) of this user that nobody else can write (`DirectoryTrust`).
/// Every file and subdirectory of the operation is then reached through the returned `Directory`,
/// so the directory checked is the one used — in the front end and the main program alike.
package enum StoreDirectory {
    /// Opens and checks the store at `path` (absolute); `nil` when it does not exist (nothing is
    /// stored yet).
    ///
    /// - Throws: `.untrusted` when it is not private to this user; `.file` when it cannot be opened.
    package static func open(_ path: String) throws(StoreFailure) -> Directory? {
        let directory: Directory?
        do { directory = try Directory.open(path) } catch { throw refusal(opening: path, failure: error) }
        guard let directory else { return nil }
        try check(directory)
        return directory
    }

    /// Opens and checks the store at `path`, creating it — and missing parents — with mode 0700
    /// first when it does not exist, and tightening it to 0700 when it is ours and readable by others.
    package static func openCreating(_ path: String) throws(StoreFailure) -> Directory {
        if let directory = try open(path) {
            do { try directory.tighten() } catch { throw .file(error) }
            return directory
        }
        try makeDirectories(path)
        guard let directory = try open(path) else {
            throw .file(FileFailure(operation: "cannot open", path: path, code: ENOENT))
        }
        return directory
    }

    /// Applies `DirectoryTrust` to what `fstat` says about the open directory.
    private static func check(_ directory: Directory) throws(StoreFailure) {
        let info: stat
        do { info = try directory.status() } catch { throw .file(error) }
        if let problem = DirectoryTrust.problem(mode: UInt32(info.st_mode), owner: UInt32(info.st_uid), user: UInt32(getuid())) {
            throw .untrusted(path: directory.path, problem: problem)
        }
    }

    /// Why `path` could not be opened: a symbolic link or something other than a directory in its
    /// place is a trust problem (told apart with `lstat`, for the message only); anything else is
    /// the system's failure.
    private static func refusal(opening path: String, failure: FileFailure) -> StoreFailure {
        var info = stat()
        if failure.code == ELOOP || failure.code == ENOTDIR, lstat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFLNK { return .untrusted(path: path, problem: .symbolicLink) }
            if info.st_mode & S_IFMT != S_IFDIR { return .untrusted(path: path, problem: .notDirectory) }
        }
        return .file(failure)
    }

    /// `mkdir -p -m 700 path`: every missing component is created with mode 0700 — but none under
    /// a directory of another user than this one (root's system directories aside): `sudo -E` keeps
    /// the user's HOME, and root-owned 0700 directories there would lock the user out of them.
    package static func makeDirectories(_ path: String) throws(StoreFailure) {
        let user = geteuid()
        var partial = ""
        var parent = (path: "/", owner: uid_t(0))
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            var info = stat()
            if stat(partial, &info) == 0 {
                parent = (partial, info.st_uid)
                continue
            }
            if parent.owner != user && parent.owner != 0 {
                throw .anotherUsersDirectory(path: parent.path, owner: UInt32(parent.owner), user: UInt32(user))
            }
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw .file(FileFailure(operation: "cannot create directory", path: partial, code: errno))
            }
            parent = (partial, user)
        }
    }
}
