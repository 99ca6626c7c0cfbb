import Glibc
import SFAuthModel

/// Which accounts each name selects — alias, username, email — kept in the store, so that
/// `--account NAME` reads one small file and the account it names instead of every account's file.
///
/// Layout, in the store directory:
/// - `names/00` … `names/ff`: 256 buckets; a name's bucket is its FNV-1a hash, modulo 256. Each holds
///   one line per (name, identifier) pair that hashes there, `<name> <identifier>\n`, both
///   percent-encoded (`FormURLEncoding`: neither can hold a space or a newline), sorted.
/// - `names/stamp`: `sfauth-names 1 <inode> <seconds> <nanoseconds>`: the `accounts/` directory the
///   buckets describe, by inode and modification time.
///
/// The store keeps it under its lock in every save and removal (`FileCredentialStore`). The stamp
/// says whether it is current: whatever else adds, replaces or removes a file in `accounts/` (an
/// older sfauth, a person, a backup restored) changes that directory's modification time, and the
/// index is stale until the main program rebuilds it; the front end, which never writes, hands a
/// stale index over. A record edited in place changes no directory time: a hit whose record no
/// longer carries the name is not believed (the caller checks); a name gained that way is found
/// after the next save or rebuild.
///
/// What is lost in a crash can only make the index look stale, or miss (and a miss is answered by
/// reading every account): a bucket that gains a name is synced before the stamp is written.
package struct NameIndex {
    /// The index's subdirectory of the store.
    package static let directoryName = "names"
    /// The stamp's file in it.
    static let stampFile = "stamp"
    /// The first words of a stamp: the format and its version.
    static let stampMagic = "sfauth-names 1"

    /// One name of one account.
    package struct Entry: Hashable, Comparable {
        /// The alias, username or email.
        package var name: String
        /// The account's identifier.
        package var identifier: String

        /// An entry.
        package init(name: String, identifier: String) {
            self.name = name
            self.identifier = identifier
        }

        package static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.name, lhs.identifier) < (rhs.name, rhs.identifier)
        }
    }

    /// The store the index is in.
    let store: Directory

    /// The index of the store opened as `store`.
    package init(store: Directory) {
        self.store = store
    }

    // MARK: - Reading (front end and main program)

    /// The identifiers listed for `name` (none when no account has it); `nil` when the index cannot
    /// tell: missing, unreadable, or stale for `accounts` (the store's `accounts/`, open).
    package func identifiers(named name: String, accounts: Directory) -> [String]? {
        do {
            guard let names = try store.subdirectory(Self.directoryName), isCurrent(names: names, accounts: accounts) else { return nil }
            guard let bucket = try names.read(Self.bucket(of: name)) else { return [] }
            return Self.identifiers(named: name, inBucket: bucket)
        } catch {
            return nil
        }
    }

    /// Whether the index describes `accounts` as it is now.
    package func isCurrent(accounts: Directory) -> Bool {
        guard let names = try? store.subdirectory(Self.directoryName) else { return false }
        return isCurrent(names: names, accounts: accounts)
    }

    private func isCurrent(names: Directory, accounts: Directory) -> Bool {
        guard let stamp = try? names.read(Self.stampFile), let status = try? accounts.status() else { return false }
        return stamp == Self.stamp(inode: UInt64(status.st_ino), time: status.st_mtim)
    }

    // MARK: - Keeping it (under the store's lock)

    /// Records that the account `identifier`, whose file in `accounts` was just written or removed,
    /// had the names `old` and has `new` now (`[]` when removed), then stamps the index current.
    /// Call it only when the index was current before the change (`isCurrent(accounts:)`); when
    /// anything fails, the index is left stale, never wrong.
    package func update(identifier: String, old: [String], new: [String], accounts: Directory) {
        let removed = Set(old).subtracting(new).map { Entry(name: $0, identifier: identifier) }
        let added = Set(new).subtracting(old).map { Entry(name: $0, identifier: identifier) }
        do {
            guard let names = try store.subdirectory(Self.directoryName) else { return }
            let buckets = Set((removed + added).map { Self.bucket(of: $0.name) })
            for bucket in buckets.sorted() {
                var entries = Set(Self.entries(in: try names.read(bucket) ?? []))
                entries.subtract(removed.filter { Self.bucket(of: $0.name) == bucket })
                entries.formUnion(added.filter { Self.bucket(of: $0.name) == bucket })
                if entries.isEmpty {
                    if unlinkat(names.descriptor, bucket, 0) != 0 && errno != ENOENT {
                        throw FileFailure(operation: "cannot remove", path: names.child(bucket), code: errno)
                    }
                } else {
                    // Synced: a stamp must never outlive a bucket's new name (see the type's comment).
                    try names.writeAtomically(Self.contents(of: entries), to: bucket, durably: !added.isEmpty)
                }
            }
            if !buckets.isEmpty { names.sync() }
            try stampCurrent(names: names, accounts: accounts, time: try Self.mark(accounts))
        } catch {
            invalidate()
        }
    }

    /// Makes the index stale (removes its stamp), for a change it cannot follow.
    package func invalidate() {
        if let names = try? store.subdirectory(Self.directoryName) { unlinkat(names.descriptor, Self.stampFile, 0) }
    }

    /// Writes the index afresh from every account's record: a new `names/` written aside, then
    /// renamed into place. `records` reads them, after `accounts`' time has been marked, so that a
    /// change made meanwhile leaves the new index stale rather than wrong.
    package func rebuild(
        accounts: Directory,
        records: () throws(FileFailure) -> [(identifier: String, credentials: OAuthCredentials?)]
    ) throws(FileFailure) {
        let time = try Self.mark(accounts)
        var buckets = [String: Set<Entry>]()
        for (identifier, credentials) in try records() {
            for name in credentials.map(AccountNames.names(of:)) ?? [] {
                buckets[Self.bucket(of: name), default: []].insert(Entry(name: name, identifier: identifier))
            }
        }
        let fresh = Self.directoryName + ".new"
        let old = Self.directoryName + ".old"
        store.removeSubdirectory(fresh)
        store.removeSubdirectory(old)
        let names = try store.privateSubdirectory(fresh)
        for (bucket, entries) in buckets {
            try names.writeAtomically(Self.contents(of: entries), to: bucket, durably: false)
        }
        try stampCurrent(names: names, accounts: accounts, time: time)
        if store.contains(Self.directoryName) { try store.rename(Self.directoryName, to: old) }
        try store.rename(fresh, to: Self.directoryName)
        store.removeSubdirectory(old)
    }

    /// Sets `accounts`' modification time to a mark no later change can carry, and returns it.
    ///
    /// File times come from the kernel's coarse clock, which advances once per tick (1–10 ms): a
    /// change made in the same tick as the time the stamp records would carry the very same time,
    /// and go unnoticed. One nanosecond before the coarse clock's present is a time every later
    /// change is after.
    private static func mark(_ accounts: Directory) throws(FileFailure) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        let mark =
            now.tv_nsec > 0
            ? timespec(tv_sec: now.tv_sec, tv_nsec: now.tv_nsec - 1)
            : timespec(tv_sec: now.tv_sec - 1, tv_nsec: 999_999_999)
        try accounts.setModificationTime(mark)
        return mark
    }

    private func stampCurrent(names: Directory, accounts: Directory, time: timespec) throws(FileFailure) {
        let inode = try accounts.status().st_ino
        try names.writeAtomically(Self.stamp(inode: UInt64(inode), time: time), to: Self.stampFile, durably: false)
    }

    // MARK: - Format

    /// The bucket of `name`: two hex digits, its FNV-1a hash modulo 256.
    package static func bucket(of name: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let value = UInt8(truncatingIfNeeded: hash ^ (hash >> 8) ^ (hash >> 16) ^ (hash >> 24))
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(value >> 4)], digits[Int(value & 0xF)]], as: UTF8.self)
    }

    /// The entries in a bucket's bytes; lines that cannot be read are left out.
    package static func entries(in bytes: [UInt8]) -> [Entry] {
        bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2,
                let name = FormURLEncoding.decode(Substring(decoding: fields[0], as: UTF8.self)),
                let identifier = FormURLEncoding.decode(Substring(decoding: fields[1], as: UTF8.self))
            else { return nil }
            return Entry(name: name, identifier: identifier)
        }
    }

    /// The identifiers a bucket lists for `name`.
    static func identifiers(named name: String, inBucket bytes: [UInt8]) -> [String] {
        // Only the lines of this name are decoded: its encoded form is compared as bytes.
        let encoded = Array(FormURLEncoding.encode(name).utf8) + [UInt8(ascii: " ")]
        return bytes.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard line.starts(with: encoded) else { return nil }
            return FormURLEncoding.decode(Substring(decoding: line.dropFirst(encoded.count), as: UTF8.self))
        }
    }

    /// A bucket's bytes: one sorted line per entry.
    package static func contents(of entries: some Sequence<Entry>) -> [UInt8] {
        Array(entries.sorted().map { FormURLEncoding.encode($0.name) + " " + FormURLEncoding.encode($0.identifier) + "\n" }.joined().utf8)
    }

    /// A stamp's bytes.
    static func stamp(inode: UInt64, time: timespec) -> [UInt8] {
        Array("\(stampMagic) \(inode) \(time.tv_sec) \(time.tv_nsec)\n".utf8)
    }
}
