import FoundationEssentials
import Glibc
import SFAuth

/// What sfauth prints on standard output that came from outside (a server's or a user's words):
/// made safe for a terminal without changing what a script reads.
package extension String {
    /// For human-readable output: control and bidi characters escaped (`TerminalText`).
    var terminalSafe: String { TerminalText.escaped(self) }
}

/// JSON for `--json` outputs: keys sorted, slashes unescaped, and every character that could
/// drive a terminal written as a `\uXXXX` escape — the same data for a JSON reader, harmless on a
/// screen. (`JSONEncoder` escapes only U+0000–U+001F; DEL, the C1 range and the bidi formatting
/// characters are escaped here.)
package enum JSONOutput {
    package static func render<T: Encodable>(_ value: T, pretty: Bool = true, fallback: String = "{}") -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        guard let data = try? encoder.encode(value) else { return fallback }
        var out = String.UnicodeScalarView()
        for scalar in String(decoding: data, as: UTF8.self).unicodeScalars {
            if TerminalText.needsEscape(scalar) {
                let hex = String(scalar.value, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

/// Writes bytes to standard output as they are (a response body is data, not text to escape).
package enum StandardOutput {
    package static func write(_ bytes: [UInt8]) {
        var rest = bytes[...]
        while !rest.isEmpty {
            let count = rest.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            rest = rest.dropFirst(count)
        }
    }
}

/// Reads all of standard input (a request body given as `--data-file -`).
package enum StandardInput {
    package static func readAll() -> [UInt8] {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }
}
