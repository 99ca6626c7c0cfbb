#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to standard error (file descriptor 2) without touching C's shared `stderr` stream, which
/// Swift 6 does not consider concurrency-safe. Progress, prompts and errors go here; stdout is for data.
public enum StandardError {
    /// Writes `text` as is (add the newline yourself).
    public static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            bytes = bytes.dropFirst(count)
        }
    }

    /// Writes `line` and a newline.
    public static func line(_ line: String) {
        write(line + "\n")
    }
}
