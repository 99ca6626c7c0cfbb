/// The head of a request a client sent to the proxy (RFC 9112 §3, §5): request line and header
/// fields, parsed strictly. The proxy builds the upstream request anew from these values, so what
/// is ambiguous here (bare CR, folded lines, space before a colon, two framings) is refused rather
/// than guessed.
package struct ProxyRequestHead: Sendable, Equatable {
    /// The method, e.g. `GET`; RFC 9110 `token` characters only.
    package var method: String
    /// The request-target as sent: `/path?query` (origin-form), or another form the rules refuse.
    package var target: String
    /// The minor version of `HTTP/1.x`: 0 or 1.
    package var minorVersion: Int
    /// The header fields in the order received, names as sent.
    package private(set) var headers: [ProxyHeaderField]

    /// A head with these parts (`parse` makes them from bytes).
    package init(method: String, target: String, minorVersion: Int, headers: [ProxyHeaderField]) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        lowercasedNames = headers.map { $0.name.lowercased() }
    }

    /// How the request body is delimited (RFC 9112 §6).
    package enum BodyFraming: Sendable, Equatable {
        /// No body.
        case none
        /// `Content-Length` bytes.
        case length(Int)
        /// `Transfer-Encoding: chunked`.
        case chunked
    }

    /// Parses a head: the bytes up to, not including, the empty line that ends it.
    ///
    /// - Throws: `ProxyRefusal` 400 for anything malformed, 505 for a version other than HTTP/1.0 or 1.1.
    package static func parse(_ bytes: some Collection<UInt8>) throws(ProxyRefusal) -> ProxyRequestHead {
        var lines = Array(bytes).split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }  // after the final line end
        // RFC 9112 §2.2: a server may ignore empty lines before the request line.
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        guard let requestLine = lines.first else { throw ProxyRefusal(400, "empty request") }
        for line in lines where line.contains(0x0D) || line.contains(0) {
            throw ProxyRefusal(400, "a bare CR or NUL in the request head")
        }

        let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw ProxyRefusal(400, "malformed request line") }
        let method = String(decoding: parts[0], as: UTF8.self)
        guard !method.isEmpty, parts[0].allSatisfy(HTTPToken.isTokenByte) else {
            throw ProxyRefusal(400, "malformed method")
        }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard !target.isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ProxyRefusal(400, "malformed request target")
        }
        let minorVersion: Int
        switch String(decoding: parts[2], as: UTF8.self) {
        case "HTTP/1.1": minorVersion = 1
        case "HTTP/1.0": minorVersion = 0
        default: throw ProxyRefusal(505, "only HTTP/1.0 and HTTP/1.1 are supported")
        }

        var headers: [ProxyHeaderField] = []
        for line in lines.dropFirst() {
            if line.isEmpty { break }
            if line.first == 0x20 || line.first == 0x09 {
                throw ProxyRefusal(400, "folded header lines (obs-fold) are not accepted")
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw ProxyRefusal(400, "a header line without a colon")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(HTTPToken.isTokenByte) else {
                throw ProxyRefusal(400, "malformed header name")
            }
            var value = line[line.index(after: colon)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            if value.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                throw ProxyRefusal(400, "a control character in a header value")
            }
            headers.append(ProxyHeaderField(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
        }
        return ProxyRequestHead(method: method, target: target, minorVersion: minorVersion, headers: headers)
    }

    /// The values of every field named `name` (lower-case), in order.
    package func values(_ name: String) -> [String] {
        var found: [String] = []
        for (index, field) in headers.enumerated() where lowercasedNames[index] == name { found.append(field.value) }
        return found
    }

    /// The field names, lower-cased once for every lookup.
    private var lowercasedNames: [String] = []

    /// The comma-separated elements of every `name` field, trimmed and lower-cased (`Connection`).
    package func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS.lowercased() }.filter { !$0.isEmpty }
    }

    /// Whether the client keeps the connection open after this request: HTTP/1.1 unless it says
    /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
    package var keepsAlive: Bool {
        let connection = tokens("connection")
        if connection.contains("close") { return false }
        return minorVersion == 1 || connection.contains("keep-alive")
    }

    /// Whether the client waits for `100 Continue` before it sends the body (RFC 9110 §10.1.1).
    package var expectsContinue: Bool {
        minorVersion == 1 && values("expect").contains { $0.lowercased() == "100-continue" }
    }

    /// How the body is delimited.
    ///
    /// - Throws: `ProxyRefusal` 400 for both `Content-Length` and `Transfer-Encoding` (the classic
    ///   request-smuggling shape), conflicting or malformed lengths; 501 for a transfer coding
    ///   other than `chunked`.
    package func bodyFraming() throws(ProxyRefusal) -> BodyFraming {
        let codings = tokens("transfer-encoding")
        let lengths = values("content-length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingOWS }
        if !codings.isEmpty || !values("transfer-encoding").isEmpty {
            guard lengths.isEmpty else { throw ProxyRefusal(400, "both Content-Length and Transfer-Encoding") }
            guard minorVersion == 1 else { throw ProxyRefusal(400, "Transfer-Encoding in an HTTP/1.0 request") }
            guard codings == ["chunked"] else { throw ProxyRefusal(501, "only the chunked transfer coding is supported") }
            return .chunked
        }
        guard let first = lengths.first else { return .none }
        guard lengths.allSatisfy({ $0 == first }) else { throw ProxyRefusal(400, "conflicting Content-Length values") }
        guard !first.isEmpty, first.count <= 18, first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first) else {
            throw ProxyRefusal(400, "malformed Content-Length")
        }
        return length == 0 ? .none : .length(length)
    }
}

/// One header field: name as sent, value without surrounding whitespace.
package struct ProxyHeaderField: Sendable, Equatable {
    /// The field name, e.g. `Content-Type`.
    package var name: String
    /// The field value.
    package var value: String

    /// A field.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// RFC 9110 §5.6.2 `tchar`.
enum HTTPToken {
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (RFC 9110 `OWS`).
    package var trimmingOWS: String {
        let start = firstIndex(where: { $0 != " " && $0 != "\t" }) ?? endIndex
        let end = lastIndex(where: { $0 != " " && $0 != "\t" }).map { index(after: $0) } ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
