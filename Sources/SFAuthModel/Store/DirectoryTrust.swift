/// Whether a credentials directory can be trusted, decided from what `fstat` says about the
/// directory once it is open (a symbolic link is refused when it is opened, `O_NOFOLLOW`). Pure, so
/// the store and sfauth's fast front end apply exactly the same rule.
public enum DirectoryTrust {
    /// Why a directory is not private to the user.
    public enum Problem: Sendable, Equatable {
        /// It is a symbolic link (not followed: someone else may control where it points).
        case symbolicLink
        /// It is something other than a directory.
        case notDirectory
        /// It belongs to another user.
        case ownedByAnotherUser(owner: UInt32, user: UInt32)
        /// Its group (or everyone) may write it, so its files cannot be trusted.
        case writableByOthers(mode: UInt32)
    }

    /// The problem with a directory whose `fstat` (or `lstat`) gave `mode` (type and permission bits) and
    /// `owner`, for the user `user`; `nil` when it is a private directory of that user.
    public static func problem(mode: UInt32, owner: UInt32, user: UInt32) -> Problem? {
        let type = mode & 0o170000
        if type == 0o120000 { return .symbolicLink }
        guard type == 0o040000 else { return .notDirectory }
        guard owner == user else { return .ownedByAnotherUser(owner: owner, user: user) }
        guard mode & 0o022 == 0 else { return .writableByOthers(mode: mode & 0o777) }
        return nil
    }
}
