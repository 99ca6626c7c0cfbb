import SFAuthCore

/// Writes the upstream's response to the client as it arrives: the head once libcurl has it, then
/// each piece of the body at once (re-chunked for an HTTP/1.1 client when upstream gave no length),
/// so a stream of server-sent events reaches the client event by event.
final class ProxyResponseWriter: ProxyResponseSink {
    private let stream: ProxyClientStream
    private let method: String
    private let minorVersion: Int
    private let clientKeepsAlive: Bool
    /// Whether a 401 is held back (its body dropped) so the request can be sent again.
    private let holdsBack401: Bool
    private var framing: ProxyRules.ResponseFraming = .untilClose
    private var pendingHead: [UInt8] = []
    private var expectedLength: Int?
    private var bodyBytes = 0
    private var clientGone = false

    /// The status of the response passed on (or held back); 0 before any.
    private(set) var status = 0
    /// Whether a 401 was held back for a retry.
    private(set) var heldBack = false
    /// Whether anything was written to the client.
    private(set) var started = false

    init(stream: ProxyClientStream, method: String, minorVersion: Int, clientKeepsAlive: Bool, holdsBack401: Bool) {
        self.stream = stream
        self.method = method
        self.minorVersion = minorVersion
        self.clientKeepsAlive = clientKeepsAlive
        self.holdsBack401 = holdsBack401
    }

    func head(status: Int, fields: [ProxyHeaderField]) -> Bool {
        self.status = status
        if holdsBack401 && status == 401 {
            heldBack = true
            return false
        }
        framing = ProxyRules.responseFraming(status: status, method: method, fields: fields, minorVersion: minorVersion)
        var head = "HTTP/1.1 \(status) \(ProxyResponseWriter.reason(status))\r\n"
        for field in ProxyRules.forwardedResponseFields(fields) { head += "\(field.name): \(field.value)\r\n" }
        switch framing {
        case .none(let length?): head += "Content-Length: \(length)\r\n"
        case .none(nil): break
        case .length(let length):
            head += "Content-Length: \(length)\r\n"
            expectedLength = Int(length)
        case .chunked: head += "Transfer-Encoding: chunked\r\n"
        case .untilClose: break
        }
        head += keepsAlive ? (minorVersion == 0 ? "Connection: keep-alive\r\n" : "") : "Connection: close\r\n"
        head += "\r\n"
        pendingHead = Array(head.utf8)
        started = true
        // A body of known length follows at once: the head goes out with its first piece (one
        // packet for a small answer). A stream's head goes now, so the client sees it open.
        if case .length = framing {} else { return flushHead() }
        return true
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if clientGone { return false }
        bodyBytes += bytes.count
        switch framing {
        case .none: return true
        case .length, .untilClose:
            if pendingHead.isEmpty { return write(bytes) }
            pendingHead.append(contentsOf: bytes)
            return flushHead()
        case .chunked:
            if bytes.isEmpty { return true }  // an empty chunk would end the body
            var chunk = pendingHead
            pendingHead = []
            chunk.append(contentsOf: Array(String(bytes.count, radix: 16).utf8) + [0x0D, 0x0A])
            chunk.append(contentsOf: bytes)
            chunk.append(contentsOf: [0x0D, 0x0A])
            return write(chunk)
        }
    }

    /// Ends the response after a complete transfer. Returns whether the connection can serve another request.
    func finish() -> Bool {
        guard flushHead() else { return false }
        if case .chunked = framing, !write([0x30, 0x0D, 0x0A, 0x0D, 0x0A]) { return false }
        if let expectedLength, bodyBytes != expectedLength { return false }  // cut short: the client must see the close
        return keepsAlive && !clientGone
    }

    private var keepsAlive: Bool {
        if case .untilClose = framing { return false }
        return clientKeepsAlive
    }

    private func flushHead() -> Bool {
        if pendingHead.isEmpty { return !clientGone }
        let head = pendingHead
        pendingHead = []
        return write(head)
    }

    private func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if clientGone || !stream.write(bytes) {
            clientGone = true
            return false
        }
        return true
    }

    /// Writes a whole short plain-text answer of the proxy's own (a refusal, 502, 503).
    static func answer(_ status: Int, _ text: String, to stream: ProxyClientStream, keepAlive: Bool, method: String) {
        let body = Array("sfauth proxy: \(text)\n".utf8)
        var head = "HTTP/1.1 \(status) \(reason(status))\r\nContent-Type: text/plain; charset=utf-8\r\n"
        head += "Content-Length: \(body.count)\r\nCache-Control: no-store\r\n"
        if status == 405 { head += "Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n" }
        head += keepAlive ? "" : "Connection: close\r\n"
        stream.write(Array((head + "\r\n").utf8) + (method == "HEAD" ? [] : body))
    }

    /// The reason phrase for a status (RFC 9110 §15); clients ignore it, people read it.
    static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
