/// Reads Linux's socket tables (`/proc/net/tcp`, `/proc/net/tcp6`; proc(5)) to find which user owns
/// the other end of a loopback connection. TCP carries no credentials, so this table is the one
/// place the kernel says who connected — the proxy serves only its own user with it.
///
/// Each row is `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout
/// inode …`. Addresses are hexadecimal dumps of the kernel's in-memory words: an IPv4 address is one
/// 32-bit word and an IPv6 address four, each printed as a number in the machine's byte order
/// (little-endian on x86-64 and arm64, the platforms sfauth builds for), the port a big-endian
/// number: `0100007F:1F90` is 127.0.0.1:8080.
package enum ProcNetTCP {
    /// A socket address as 16 bytes (IPv4 as IPv4-mapped IPv6, `::ffff:a.b.c.d`) and a port, so a
    /// client on an IPv6 socket connected to 127.0.0.1 (listed in `tcp6`) compares equal.
    package struct Endpoint: Sendable, Equatable, Hashable {
        /// The address in network byte order.
        package var address: [UInt8]
        /// The port.
        package var port: UInt16

        /// An endpoint from 4 (IPv4) or 16 (IPv6) address bytes in network order.
        package init(address: [UInt8], port: UInt16) {
            self.address = address.count == 4 ? [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] + address : address
            self.port = port
        }
    }

    /// Parses one `ADDRESS:PORT` column (`0100007F:1F90`, or 32 hex digits for IPv6).
    package static func endpoint(_ column: Substring) -> Endpoint? {
        let parts = column.split(separator: ":")
        guard parts.count == 2, parts[0].count == 8 || parts[0].count == 32, parts[1].count == 4,
            let port = UInt16(parts[1], radix: 16)
        else { return nil }
        var address: [UInt8] = []
        let hex = Array(parts[0].utf8)
        for wordStart in stride(from: 0, to: hex.count, by: 8) {
            var word: [UInt8] = []
            for byteStart in stride(from: wordStart, to: wordStart + 8, by: 2) {
                guard let byte = UInt8(String(decoding: hex[byteStart..<byteStart + 2], as: UTF8.self), radix: 16) else { return nil }
                word.append(byte)
            }
            address += word.reversed()  // a little-endian word's dump: its last byte comes first in memory
        }
        return Endpoint(address: address, port: port)
    }

    /// The uid owning the socket whose local end is `local` and remote end `remote`, in the text of
    /// one or more tables; `nil` when no row matches.
    ///
    /// For a connection the proxy accepted, pass the client's address as `local` and the proxy's as
    /// `remote`: that row is the client's socket, and its uid the client's user.
    package static func owner(local: Endpoint, remote: Endpoint, in table: String) -> UInt32? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 8, let rowLocal = endpoint(fields[1]), let rowRemote = endpoint(fields[2]) else { continue }
            if rowLocal == local && rowRemote == remote { return UInt32(fields[7]) }
        }
        return nil
    }
}
