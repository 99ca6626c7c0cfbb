import Glibc

/// Who is listening on a local TCP port, from `/proc`: the socket's inode in `/proc/net/tcp{,6}`,
/// then the process holding a descriptor to it. Best effort — another user's processes cannot be
/// looked into — and only for messages: "port 1717 is held by sf (pid 4242)".
enum PortHolder {
    /// `name (pid N)` of a process listening on `port`, or `nil` when it cannot be found.
    static func describe(port: UInt16) -> String? {
        let inodes = listeningInodes(port: port)
        guard !inodes.isEmpty, let proc = opendir("/proc") else { return nil }
        defer { closedir(proc) }
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard let pid = Int32(name), pid != getpid() else { continue }
            if holds(pid: pid, anyOf: inodes) {
                let command = (try? POSIXFile.read("/proc/\(pid)/comm")).map { String(decoding: $0, as: UTF8.self) } ?? "?"
                return "\(command.split(whereSeparator: \.isNewline).first.map(String.init) ?? "?") (pid \(pid))"
            }
        }
        return nil
    }

    /// The inodes of sockets listening (state 0A) on `port`, from `/proc/net/tcp` and `tcp6`.
    private static func listeningInodes(port: UInt16) -> Set<String> {
        let hexPort = String(port, radix: 16, uppercase: true)
        let wanted = String(repeating: "0", count: 4 - hexPort.count) + hexPort
        var inodes = Set<String>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let bytes = try? POSIXFile.read(table) else { continue }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[1].hasSuffix(":" + wanted), fields[3] == "0A" else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    private static func holds(pid: Int32, anyOf inodes: Set<String>) -> Bool {
        let directory = "/proc/\(pid)/fd"
        guard let fds = opendir(directory) else { return false }
        defer { closedir(fds) }
        var buffer = [CChar](repeating: 0, count: 64)
        while let entry = readdir(fds) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            let count = readlink(directory + "/" + name, &buffer, buffer.count - 1)
            guard count > 0 else { continue }
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if target.hasPrefix("socket:["), inodes.contains(String(target.dropFirst(8).dropLast())) { return true }
        }
        return false
    }
}
