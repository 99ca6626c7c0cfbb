import Glibc
import SFAuthCore

/// Creates the listening sockets of a `LoopbackListener`: loopback addresses only, never the
/// wildcard address; `SO_REUSEADDR`; close-on-exec and non-blocking from the start.
enum LoopbackSockets {
    /// A loopback address family to bind.
    enum Family {
        case ipv4, ipv6

        var displayName: String { self == .ipv4 ? "127.0.0.1" : "[::1]" }
    }

    /// Binds the sockets for `host`: `127.0.0.1`, `[::1]`, or both for `localhost` (the IPv6 one
    /// only where `::1` exists). Returns the descriptors and the port bound.
    static func bind(host: String, port: UInt16) throws(OAuthError) -> (fds: [Int32], port: UInt16) {
        switch host {
        case "127.0.0.1":
            let fd = try listen(.ipv4, port: port)
            return ([fd], try boundPort(fd))
        case "[::1]":
            let fd: Int32
            do {
                fd = try openSocket(.ipv6, port: port)
            } catch {
                switch error {
                case .unavailable:
                    throw OAuthError.configuration(
                        "the IPv6 loopback address ::1 is not available on this machine; use 127.0.0.1 as the redirect host")
                case .addressInUse:
                    throw portInUse(port, on: .ipv6)
                case .failed(let error):
                    throw error
                }
            }
            return ([fd], try boundPort(fd))
        case "localhost":
            // An ephemeral port free on 127.0.0.1 may be taken on ::1: pick again a few times.
            var attempts = 0
            while true {
                attempts += 1
                let v4 = try listen(.ipv4, port: port)
                let chosen: UInt16
                do { chosen = try boundPort(v4) } catch {
                    shutdownAndClose(v4)
                    throw error
                }
                do {
                    let v6 = try openSocket(.ipv6, port: chosen)
                    return ([v4, v6], chosen)
                } catch {
                    switch error {
                    case .unavailable:
                        return ([v4], chosen)
                    case .addressInUse:
                        shutdownAndClose(v4)
                        if port == 0, attempts < 8 { continue }
                        throw portInUse(chosen, on: .ipv6)
                    case .failed(let failure):
                        shutdownAndClose(v4)
                        throw failure
                    }
                }
            }
        default:
            throw OAuthError.configuration(
                "the redirect host '\(host)' is not a loopback host; use 127.0.0.1, [::1] or localhost")
        }
    }

    /// Closes a socket of the listener (listening or connected), shutting it down first.
    ///
    /// `close` only drops this descriptor, and while another thread of the host program spawns a
    /// child, that child holds a copy of every descriptor until its `exec` (close-on-exec acts only
    /// then): the port would go on accepting connections, or a connection would stay without its
    /// end, until that moment — after `finish` or `cancel` returned. `shutdown` acts on the socket
    /// itself, whoever else holds it: a listening socket stops listening at once (connections still
    /// queued are reset) and a connection sends its FIN.
    static func shutdownAndClose(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    /// Why one socket could not be bound.
    enum BindError: Error {
        /// The address family or the address does not exist on this machine.
        case unavailable
        /// Another socket has the port (`EADDRINUSE`).
        case addressInUse
        /// Any other failure, already worded for the user.
        case failed(OAuthError)
    }

    /// The error for a port someone else holds. A fixed port is registered with the server
    /// (Salesforce: exactly 1717), so another port would not match; most often another sign-in is
    /// waiting on it, and `/proc` may tell which process (looked up only now, not on every retry).
    private static func portInUse(_ port: UInt16, on family: Family) -> OAuthError {
        .portInUse(port: port, address: family.displayName, heldBy: PortHolder.describe(port: port))
    }

    private static func openSocket(_ family: Family, port: UInt16) throws(BindError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(family == .ipv4 ? AF_INET : AF_INET6, type, 0)
        guard fd >= 0 else {
            let code = errno
            if family == .ipv6, code == EAFNOSUPPORT { throw .unavailable }
            throw .failed(.localFault("cannot create a socket: \(GlibcExtras.errorText(code))"))
        }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1, never INADDR_ANY
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .ipv6:
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0[15] = 1 }  // ::1, never in6addr_any
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case EADDRINUSE:
                throw .addressInUse
            case EADDRNOTAVAIL where family == .ipv6, EAFNOSUPPORT where family == .ipv6:
                throw .unavailable
            case EACCES:
                throw .failed(
                    .configuration(
                        Problem(
                            "port \(port) on \(family.displayName) needs privileges (ports below 1024 are reserved)", remedy: .chooseCallbackPort)))
            default:
                throw .failed(
                    .localFault(
                        "cannot listen on \(family.displayName) port \(port): \(GlibcExtras.errorText(code))"))
            }
        }
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw .failed(
                .localFault(
                    "cannot listen on \(family.displayName) port \(port): \(GlibcExtras.errorText(code))"))
        }
        return fd
    }

    private static func listen(_ family: Family, port: UInt16) throws(OAuthError) -> Int32 {
        do {
            return try openSocket(family, port: port)
        } catch {
            switch error {
            case .unavailable:
                throw .localFault("the loopback address \(family.displayName) is not available on this machine")
            case .addressInUse:
                throw portInUse(port, on: family)
            case .failed(let failure):
                throw failure
            }
        }
    }

    /// The local address of a bound socket, e.g. `127.0.0.1:54321` or `[::1]:54321`.
    static func localAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return "?" }
        let isIPv6 = storage.ss_family == sa_family_t(AF_INET6)
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        return withUnsafeBytes(of: &storage) { bytes in
            let port = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            if isIPv6 {
                inet_ntop(AF_INET6, bytes.baseAddress! + 8, &text, socklen_t(text.count))  // sin6_addr
                return "[\(Self.string(text))]:\(port)"
            }
            inet_ntop(AF_INET, bytes.baseAddress! + 4, &text, socklen_t(text.count))  // sin_addr
            return "\(Self.string(text)):\(port)"
        }
    }

    /// The local port of a bound socket (`getsockname`).
    static func boundPort(_ fd: Int32) throws(OAuthError) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else {
            throw .localFault("cannot read the bound port: \(GlibcExtras.errorText(errno))")
        }
        return withUnsafeBytes(of: &storage) { bytes in
            // sin_port and sin6_port are both at offset 2, in network byte order.
            UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        }
    }

    /// The text of a NUL-terminated C string held in an array.
    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
