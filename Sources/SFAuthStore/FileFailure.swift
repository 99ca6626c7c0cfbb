import Glibc
import SFAuthModel

/// A system call on a file or directory of the store that failed: what was tried, on which path,
/// and the system's reason — `cannot open /home/u/.local/share/sfauth/accounts: Permission denied`.
package struct FileFailure: Error, Equatable, CustomStringConvertible {
    /// What was tried, in a few words: `cannot open`, `cannot replace`.
    package var operation: String
    /// The path it was tried on (for the message: the call itself went through a descriptor).
    package var path: String
    /// `errno`.
    package var code: Int32

    /// A failure of `operation` on `path` with `errno` `code`.
    package init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// `<operation> <path>: <strerror(code)>`.
    package var description: String { "\(operation) \(path): \(String(cString: strerror(code)))" }
}

/// Why the credentials directory cannot be used: it is not private to this user, or the system
/// said no.
package enum StoreFailure: Error, Equatable, CustomStringConvertible {
    /// The directory fails `DirectoryTrust`: credentials read from a directory someone else can
    /// write are not ours to trust, and secrets written there are not safe.
    case untrusted(path: String, problem: DirectoryTrust.Problem)
    /// A directory is missing under one that belongs to another user (not root), who would find a
    /// directory of ours in their home: `sudo -E sfauth login` locking the user out of `~/.local`.
    case anotherUsersDirectory(path: String, owner: UInt32, user: UInt32)
    /// A system call failed.
    case file(FileFailure)

    /// What is wrong, in a sentence with the fix.
    package var description: String {
        switch self {
        case .file(let failure):
            return failure.description
        case .anotherUsersDirectory(let path, let owner, let user):
            return "\(path) belongs to user id \(owner), but sfauth runs as user id \(user) and creates nothing in another user's directory "
                + "(it would lock them out): run sfauth as that user, or with `sudo -H` (which sets HOME to the home of the user it runs as)"
        case .untrusted(let path, .symbolicLink):
            return "\(path) is a symbolic link, which is not followed for credentials; replace it with a directory of your own (mkdir -m 700)"
        case .untrusted(let path, .notDirectory):
            return "\(path) is not a directory; move it away"
        case .untrusted(let path, .ownedByAnotherUser(let owner, let user)):
            return "\(path) belongs to user id \(owner), not to you (\(user)); move it away"
        case .untrusted(let path, .writableByOthers(let mode)):
            return
                "\(path) is writable by \(mode & 0o002 != 0 ? "everyone" : "its group") (mode \(String(mode, radix: 8))), so its files cannot be trusted; check them, then run `chmod 700 \(path)`"
        }
    }
}
