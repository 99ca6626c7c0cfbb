import FoundationEssentials
import Glibc
import SFAuthModel

/// git's credential helper protocol (`git help credential`, "Input/Output Format"): `key=value`
/// lines on the helper's stdin until a blank line or the end, and the same format back on stdout.
package enum GitCredential {
    /// The attributes git sent, in order (a key such as `wwwauth[]` may repeat).
    package struct Attributes: Sendable, Equatable {
        /// Every `key=value` pair, in the order read.
        package var pairs: [(key: String, value: String)]

        /// Reads `text` up to the first blank line, its lines ended by LF or CRLF; lines without `=`
        /// are ignored.
        package init(parsing text: String) {
            pairs = []
            // "\r\n" is one Character to Swift, so splitting on "\n" alone would keep CRLF lines whole.
            for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                if line.isEmpty { break }
                guard let equals = line.firstIndex(of: "=") else { continue }
                pairs.append((String(line[..<equals]), String(line[line.index(after: equals)...])))
            }
        }

        /// Reads git's request from standard input: all of it, as git closes it after the
        /// attributes (at most about 1 MiB is read).
        package static func readingStandardInput() -> Attributes {
            var bytes = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while bytes.count < 1 << 20 {
                let count = read(0, &buffer, buffer.count)
                if count > 0 {
                    bytes += buffer[0..<count]
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                break
            }
            return Attributes(parsing: String(decoding: bytes, as: UTF8.self))
        }

        /// The value of `key`: the last one given, as git itself reads a key sent twice.
        package subscript(key: String) -> String? { pairs.last { $0.key == key }?.value }

        /// The same pairs in the same order.
        package static func == (lhs: Attributes, rhs: Attributes) -> Bool {
            lhs.pairs.map(\.key) == rhs.pairs.map(\.key) && lhs.pairs.map(\.value) == rhs.pairs.map(\.value)
        }
    }

    /// A host a helper answers for: a scheme and `host[:port]`, as git sends them in `protocol` and
    /// `host` (git includes a non-default port in `host`).
    package struct Host: Sendable, Equatable, CustomStringConvertible {
        /// `https` (the default) or `http`.
        package var scheme: String
        /// The host, with `:port` when one was given, lowercased.
        package var hostAndPort: String

        /// Reads `https://git.example`, `http://127.0.0.1:8080/`, `git.example:8443` or `git.example`
        /// (scheme `https` unless `defaultScheme` says otherwise). A path, user info, query or any
        /// other scheme is refused, and plain `http` for anything but a loopback host.
        package init(parsing text: String, defaultScheme: String = "https") throws(OAuthError) {
            var rest = Substring(text)
            var scheme = defaultScheme.lowercased()
            if let range = rest.firstRange(of: "://") {
                scheme = rest[..<range.lowerBound].lowercased()
                rest = rest[range.upperBound...]
            }
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard scheme == "https" || scheme == "http" else {
                throw .configuration("git credentials are for https:// (or http://) hosts, not '\(text)'")
            }
            guard !rest.isEmpty, !rest.contains(where: { "/@?#\\ \t\r\n".contains($0) }) else {
                throw .configuration("'\(text)' is not a host: give host, host:port or a URL such as https://git.example")
            }
            let name = rest.lowercased()
            let bare = name.hasPrefix("[") ? String(name.prefix { $0 != "]" }) + "]" : String(name.prefix { $0 != ":" })
            guard scheme == "https" || ["127.0.0.1", "localhost", "[::1]"].contains(bare) else {
                throw .configuration(
                    "plain http would send the token in the clear: use https://\(rest), or http only for 127.0.0.1, [::1] or localhost")
            }
            self.scheme = scheme
            hostAndPort = name
        }

        /// The URL prefix git config keys are scoped by: `https://git.example`.
        package var url: String { "\(scheme)://\(hostAndPort)" }

        /// The URL prefix (`url`).
        package var description: String { url }

        /// Whether git's request (`protocol`, `host`) is for this host.
        package func matches(_ attributes: Attributes) -> Bool {
            attributes["protocol"]?.lowercased() == scheme && attributes["host"]?.lowercased() == hostAndPort
        }

        /// Whether `credentials` were issued by this host itself — the scheme, host and port of
        /// their authorization server (issuer, authorization or token endpoint) or instance are this
        /// host's, as with GitHub, GitLab or Gitea signing people in to their own git. A helper not
        /// told which account to use gives the default account's token to no other host: every
        /// sign-in may change the default.
        package func isServer(of credentials: OAuthCredentials) -> Bool {
            let server = credentials.server
            let urls = [server.issuer, server.authorizationEndpoint, server.tokenEndpoint, credentials.instanceURL]
            return urls.contains { $0.flatMap(Self.origin(of:)) == url }
        }

        /// `scheme://host[:port]` of `text`, the port left out when it is the scheme's own — the
        /// form `url` has.
        private static func origin(of text: String) -> String? {
            guard let parts = EndpointURL.parts(of: text) else { return nil }
            let host = parts.host.contains(":") && !parts.host.hasPrefix("[") ? "[\(parts.host)]" : parts.host
            let port = parts.port.flatMap { $0 == (parts.scheme == "https" ? 443 : 80) ? nil : ":\($0)" } ?? ""
            return "\(parts.scheme)://\(host)\(port)"
        }
    }

    /// The username answered when the account has none: `oauth2`.
    package static let defaultUsername = "oauth2"

    /// The answer to `get`: `username`, `password` and `password_expiry_utc` (seconds since 1970;
    /// git 2.41 and later stop using the password then).
    package static func answer(username: String, password: String, expiry: Date?) -> String {
        var lines = ["username=\(oneLine(username))", "password=\(oneLine(password))"]
        if let expiry { lines.append("password_expiry_utc=\(expiry.unixSeconds)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The answer that stops git from asking anyone else (a terminal prompt) after the helper said
    /// why it has nothing: `quit=1` (git 2.22+).
    package static let quit = "quit=1\n"

    /// A value with newlines and NULs removed: git's format has no escaping, and a value that
    /// contained one would inject attributes.
    static func oneLine(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0 != "\n" && $0 != "\r" && $0 != "\0" }.map(Character.init))
    }

    /// The `credential.<url>.helper` value that runs `executable arguments…`: `!` and a shell
    /// command line, each word single-quoted (git runs it with `sh -c`).
    package static func helperValue(executable: String, arguments: [String]) -> String {
        "!" + ([executable] + arguments).map(shellQuoted).joined(separator: " ")
    }

    /// `'word'` for `sh`, with `'` written as `'\''`.
    package static func shellQuoted(_ word: String) -> String {
        "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
