import Glibc

/// Writes to standard error (file descriptor 2) without touching C's shared `stderr` stream, which
/// Swift 6 does not consider concurrency-safe. Progress, prompts and errors go here; stdout is for data.
///
/// Everything written here is for a person at a terminal, and much of it quotes a server: control
/// and bidi characters other than newlines and tabs are escaped on the way out (`TerminalText`).
package enum StandardError {
    /// Writes `text` (add the newline yourself), with terminal controls escaped.
    package static func write(_ text: String) {
        var bytes = Array(TerminalText.escaped(text, keepingNewlines: true).utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            bytes = bytes.dropFirst(count)
        }
    }

    /// Writes `line` and a newline.
    package static func line(_ line: String) {
        write(line + "\n")
    }
}
