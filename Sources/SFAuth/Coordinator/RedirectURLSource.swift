import Glibc
import SFAuthCore

/// Where a person can paste the address the browser ended up at, when the browser runs on another
/// machine and its redirect cannot reach the listener (e.g. over SSH without a port forward).
public protocol RedirectURLSource: Sendable {
    /// Blocks until the next line is entered; `nil` at the end of input.
    func nextLine() -> String?
    /// A pasted line did not belong to this login; the coordinator keeps reading.
    func rejected(_ line: String, reason: String)
}

/// Reads pasted redirect URLs from standard input and reports rejected ones on standard error.
public struct StandardInputRedirectSource: RedirectURLSource {
    /// Creates the source.
    public init() {}

    /// Reads one line from standard input, blocking; `nil` at the end of input.
    public func nextLine() -> String? {
        var bytes = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let count = read(0, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
            if bytes.count > 64 * 1024 { bytes.removeAll() }  // not a URL anyone pastes; start over
        }
    }

    /// Says on standard error that the pasted address was not used, and why.
    public func rejected(_ line: String, reason: String) {
        StandardError.line("Not used: \(reason). Paste the address again, or finish in a browser on this machine.")
    }
}
