import Glibc

/// This process's standard input, read whole — for helper protocols whose client writes one
/// request and closes the pipe.
package enum StandardInput {
    /// Every byte up to the end of input, at most `limit` (the rest is left unread); what was read
    /// before an error other than `EINTR`.
    package static func readAll(limit: Int) -> [UInt8] {
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = read(0, &buffer, min(buffer.count, limit - bytes.count))
            if count > 0 {
                bytes += buffer[0..<count]
                continue
            }
            if count < 0 && errno == EINTR { continue }
            break
        }
        return bytes
    }
}
