import Glibc
import SFAuthCore

/// Who is at the other end of a connection the proxy accepted: the user id the kernel knows, so
/// that only the proxy's own user is served (another user on the machine must not borrow the token).
enum PeerCredentials {
    /// The uid of a Unix-socket peer (`SO_PEERCRED`, unix(7)), or `nil`.
    static func unixPeerUID(_ fd: Int32) -> UInt32? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: declared by glibc only under _GNU_SOURCE,
        // which Swift's Glibc module lacks; the layout is fixed by the kernel ABI.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        let soPeerCred: Int32 = 17  // SO_PEERCRED in <asm-generic/socket.h> (x86-64, arm64)
        guard getsockopt(fd, SOL_SOCKET, soPeerCred, &credentials, &length) == 0 else { return nil }
        return credentials.uid
    }

    /// The uid owning the client socket of a loopback TCP connection, from `/proc/net/tcp` and
    /// `/proc/net/tcp6`, or `nil` when it cannot be found (the connection is then refused).
    static func tcpPeerUID(_ fd: Int32) -> UInt32? {
        guard let ours = endpoint(fd, peer: false), let theirs = endpoint(fd, peer: true) else { return nil }
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = readFile(table) else { continue }
            if let uid = ProcNetTCP.owner(local: theirs, remote: ours, in: text) { return uid }
        }
        return nil
    }

    /// This socket's own address (`peer == false`) or its peer's.
    private static func endpoint(_ fd: Int32, peer: Bool) -> ProcNetTCP.Endpoint? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        let family = Int32(storage.ss_family)
        return withUnsafeBytes(of: &storage) { bytes -> ProcNetTCP.Endpoint? in
            let port = UInt16(bytes[2]) << 8 | UInt16(bytes[3])  // sin_port / sin6_port, network order
            switch family {
            case AF_INET: return ProcNetTCP.Endpoint(address: Array(bytes[4..<8]), port: port)  // sin_addr
            case AF_INET6: return ProcNetTCP.Endpoint(address: Array(bytes[8..<24]), port: port)  // sin6_addr
            default: return nil
            }
        }
    }

    /// The contents of a (small, /proc) file, or `nil`.
    private static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { break }
            contents.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: contents, as: UTF8.self)
    }
}
