/// The little HTTP/1.1 the loopback listener speaks: parsing a request line, building responses
/// (always `Connection: close`), and filling the page templates.
package enum LoopbackHTTP {
    /// Largest request head accepted (request line plus header fields): 64 KiB. Browsers send every
    /// `localhost` cookie of every local development server to every port, so a real redirect can
    /// carry tens of kilobytes of `Cookie` header.
    package static let maximumHeadSize = 64 * 1024

    /// Where the browser is sent after the callback, by `303 See Other`: `/<app>/signed-in`.
    static func signedInPath(for app: AppIdentity) -> String { "/\(app.name)/signed-in" }
    /// Where the browser is sent after the callback when the login failed: `/<app>/failed`.
    static func failedPath(for app: AppIdentity) -> String { "/\(app.name)/failed" }

    /// The parts of a request head that the listener looks at.
    package struct RequestLine {
        var method: Substring
        var path: Substring
        var query: Substring
        /// The `Host` header field's value, when there is exactly one.
        var host: Substring? = nil
    }

    /// The offset just past `\r\n\r\n` in `bytes`, if the head is complete.
    package static func endOfHead(in bytes: [UInt8], searchFrom start: Int) -> Int? {
        var index = max(start, 3)
        while index < bytes.count {
            if bytes[index] == 10, bytes[index - 1] == 13, bytes[index - 2] == 10, bytes[index - 3] == 13 {
                return index + 1
            }
            index += 1
        }
        return nil
    }

    /// Parses `GET /path?query HTTP/1.1` and the `Host` field from a complete head; `nil` when the
    /// request line is malformed.
    package static func parseRequestLine(_ head: ArraySlice<UInt8>) -> RequestLine? {
        guard let lineEnd = head.firstIndex(of: 13) else { return nil }
        let line = String(decoding: head[head.startIndex..<lineEnd], as: UTF8.self)
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[2].hasPrefix("HTTP/1."),
            parts[1].first == "/"
        else { return nil }
        let target = parts[1]
        var request: RequestLine
        if let mark = target.firstIndex(of: "?") {
            request = RequestLine(method: parts[0], path: target[..<mark], query: target[target.index(after: mark)...])
        } else {
            request = RequestLine(method: parts[0], path: target, query: "")
        }
        request.host = hostField(in: head[lineEnd...])
        return request
    }

    /// The value of the one `Host` field among the header lines (RFC 9112 §3.2: a request with
    /// none, or with several, is invalid); `nil` otherwise.
    package static func hostField(in fields: ArraySlice<UInt8>) -> Substring? {
        var found: Substring?
        var count = 0
        let text = String(decoding: fields, as: UTF8.self)
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].lowercased() == "host"
            else { continue }
            count += 1
            found = line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
            while let last = found?.last, last == " " || last == "\t" { found = found?.dropLast() }
        }
        return count == 1 ? found : nil
    }

    /// Whether `host` (a `Host` field value) names this listener: `127.0.0.1:PORT`,
    /// `localhost:PORT` or `[::1]:PORT`, exactly. Anything else — another name that resolves here
    /// (DNS rebinding), a missing port — is not a request the browser made to us.
    package static func isOwnHost(_ host: Substring?, port: UInt16) -> Bool {
        guard let host else { return false }
        let lowered = host.lowercased()
        return ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"].contains(lowered)
    }

    /// A complete response. Every response closes the connection and forbids caching, framing,
    /// loading anything and sending a referrer.
    static func response(
        status: Int, reason: String, body: String, location: String? = nil, includeBody: Bool = true
    ) -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        if let location { head += "Location: \(location)\r\n" }
        head += "Content-Type: text/html; charset=utf-8\r\n"
        head += "Content-Length: \(bodyBytes.count)\r\n"
        head += "Cache-Control: no-store\r\n"
        head += "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
        head += "Referrer-Policy: no-referrer\r\n"
        head += "X-Content-Type-Options: nosniff\r\n"
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + (includeBody ? bodyBytes : [])
    }

    /// `303 See Other` to a local path, so the authorization code leaves the address bar.
    static func redirect(to path: String) -> [UInt8] {
        let body = "<!DOCTYPE html>\n<title>Redirecting</title>\n<p><a href=\"\(htmlEscape(path))\">Continue</a></p>\n"
        return response(status: 303, reason: "See Other", body: body, location: path)
    }

    /// `404 Not Found` (no body for `HEAD`).
    static func notFound(includeBody: Bool) -> [UInt8] {
        response(status: 404, reason: "Not Found", body: CallbackPages.notFound, includeBody: includeBody)
    }

    /// `400 Bad Request` (or another 4xx) with the page explaining that the request is not part of
    /// the login in progress.
    static func rejected(reason: String, status: Int = 400, statusReason: String = "Bad Request") -> [UInt8] {
        let body = CallbackPages.rejected.replacing("{{reason}}", with: htmlEscape(reason))
        return response(status: status, reason: statusReason, body: body)
    }

    /// The success page with `detail` (e.g. the account name) escaped, naming `app`.
    static func signedInPage(detail: String, app: AppIdentity = .sfauth) -> String {
        // The product first: what a server put in `detail` is shown as it is, never filled in.
        CallbackPages.signedIn.replacing("{{product}}", with: htmlEscape(app.displayName)).replacing("{{detail}}", with: htmlEscape(detail))
    }

    /// The failure page with `message` escaped, naming `app`.
    static func failedPage(message: String, app: AppIdentity = .sfauth) -> String {
        CallbackPages.failed.replacing("{{product}}", with: htmlEscape(app.displayName)).replacing("{{message}}", with: htmlEscape(message))
    }

    /// Escapes `& < > " '` for HTML text and attribute values.
    static func htmlEscape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
