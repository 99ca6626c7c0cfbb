import Glibc
import SFAuth

/// Whether something answers at a display: its socket accepts a connection within a second. A
/// `DISPLAY` left over from another session (or an SSH forward that is gone) looks like a display
/// to every program, and a browser started on it fails.
enum DisplayProbe {
    /// Whether `display` answers; `XDG_RUNTIME_DIR` finds a Wayland socket given by name.
    static func answers(_ display: SessionKind.Display, runtimeDirectory: String?) -> Bool {
        switch display {
        case .wayland(let name):
            let path = name.hasPrefix("/") ? name : (runtimeDirectory ?? "") + "/" + name
            return connectsUnix(path)
        case .x11(let name):
            // [host]:number[.screen]: a Unix socket for a local display, TCP 6000+number otherwise.
            guard let colon = name.lastIndex(of: ":"),
                let number = Int(name[name.index(after: colon)...].prefix { $0.isNumber }), (0...1000).contains(number)
            else { return false }
            let host = String(name[..<colon])
            if host.isEmpty || host == "unix" {
                // X servers listen on the file and on Linux's abstract name of the same path.
                return connectsUnix("/tmp/.X11-unix/X\(number)") || connectsUnix("/tmp/.X11-unix/X\(number)", abstract: true)
            }
            return connectsTCP(host: host == "localhost" ? "127.0.0.1" : host, port: UInt16(6000 + number))
        }
    }

    private static func connectsUnix(_ path: String, abstract: Bool = false) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = (abstract ? [0] : []) + Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return connects(family: AF_UNIX) { fd in
            withUnsafePointer(to: &address) {
                // An abstract name is exactly its bytes long; a path's length may include the rest.
                let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
                return $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(length)) }
            }
        }
    }

    private static func connectsTCP(host: String, port: UInt16) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return false }  // a name would need DNS: not judged
        return connects(family: AF_INET) { fd in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    /// A non-blocking connect, waited for up to a second.
    private static func connects(family: Int32, _ connectTo: (Int32) -> Int32) -> Bool {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if connectTo(fd) == 0 { return true }
        guard errno == EINPROGRESS || errno == EAGAIN else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&entry, 1, 1000) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
    }
}
