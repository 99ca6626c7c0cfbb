/// Where a proxy listens: a loopback TCP address (`--listen`) or a Unix socket (`--socket`).
/// Anything a process on another machine could reach is refused before a socket is made.
package enum ProxyListenAddress: Sendable, Equatable {
    /// `127.0.0.1`, `[::1]` or `localhost` (both), and a port (0: a free one).
    case tcp(host: String, port: UInt16)
    /// A Unix domain socket at this path.
    case unix(path: String)

    /// The default: `127.0.0.1`, a free port.
    package static let defaultTCP = ProxyListenAddress.tcp(host: "127.0.0.1", port: 0)

    /// Parses `--listen HOST[:PORT]`.
    ///
    /// - Throws: `OAuthError.configuration` for a host other than `127.0.0.1`, `::1`/`[::1]` or
    ///   `localhost` — the wildcard addresses and LAN addresses would let other machines use the
    ///   token — or a port outside 0–65535.
    package static func parse(_ text: String) throws(OAuthError) -> ProxyListenAddress {
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid(text, "an unterminated IPv6 address") }
            host = String(text[...close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid(text, "text after the IPv6 address") }
                portText = rest.dropFirst()
            }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        var port: UInt16 = 0
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt16(portText)
            else { throw invalid(text, "the port \"\(TerminalText.escaped(String(portText)))\" is not a number from 0 to 65535") }
            port = value
        }
        switch host.lowercased() {
        case "127.0.0.1": return .tcp(host: "127.0.0.1", port: port)
        case "[::1]", "::1": return .tcp(host: "[::1]", port: port)
        case "localhost": return .tcp(host: "localhost", port: port)
        case "0.0.0.0", "[::]", "::", "", "*":
            throw OAuthError.configuration(
                "--listen \(TerminalText.escaped(text)) would accept connections from other machines, which would use your token; listen on a loopback address: 127.0.0.1, [::1] or localhost"
            )
        default:
            throw OAuthError.configuration(
                "--listen \(TerminalText.escaped(text)) is not a loopback address; the proxy listens only on 127.0.0.1, [::1] or localhost (or --socket PATH)"
            )
        }
    }

    private static func invalid(_ text: String, _ why: String) -> OAuthError {
        .configuration("--listen \(TerminalText.escaped(text)) is not HOST[:PORT]: \(why)")
    }
}
