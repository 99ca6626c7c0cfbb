import CCurl
import Glibc
import SFAuthCore

/// One blocking libcurl transfer. Runs on a dedicated thread (see `CurlHTTPClient.send`).
enum CurlTransfer {
    /// Loads libcurl if needed, sends `request` to `endpoint` and collects the final response.
    static func run(
        _ request: HTTPRequest, endpoint: HTTPEndpoint, options: CurlHTTPClient.Options, cancel: CurlCancelSignal
    ) -> Result<HTTPResponse, any Error> {
        if cancel.isSignalled { return .failure(CancellationError()) }
        do {
            try loadLibcurl(names: options.libraryNames)
            return .success(try perform(request, endpoint: endpoint, options: options, cancel: cancel))
        } catch {
            return .failure(error)
        }
    }

    /// Checks the method and header fields, without I/O, so nothing can be smuggled into the
    /// request head (line breaks, NUL, separators in names).
    static func validate(_ request: HTTPRequest, endpoint: HTTPEndpoint) throws(HTTPTransportError) {
        func failure(_ what: String) -> HTTPTransportError {
            HTTPTransportError(kind: .other, message: "request to \(endpoint.display) not sent: \(what)")
        }
        if request.method.isEmpty || request.method.utf8.contains(where: { !isTokenByte($0) }) {
            throw failure("invalid method \"\(request.method)\"")
        }
        for (name, value) in request.headers {
            if name.isEmpty || name.utf8.contains(where: { !isTokenByte($0) }) {
                throw failure("invalid header name \"\(name)\"")
            }
            if value.utf8.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) {
                throw failure("header \(name) contains a line break or NUL")
            }
        }
    }

    // MARK: - Loading

    static func loadLibcurl(names: [String]) throws(HTTPTransportError) {
        if sfcurl_is_loaded() != 0 { return }
        var cNames: [UnsafePointer<CChar>?] = names.map { UnsafePointer(strdupOrNil($0)) }
        defer { for name in cNames { free(UnsafeMutablePointer(mutating: name)) } }
        cNames.append(nil)
        var error = [CChar](repeating: 0, count: 512)
        let result = cNames.withUnsafeBufferPointer { list in
            sfcurl_load(list.baseAddress, &error, error.count)
        }
        if result != 0 {
            let reason = singleLine(String(decoding: error.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            throw HTTPTransportError(
                kind: .unavailable,
                message: "libcurl could not be loaded (\(reason)); install the libcurl4 package")
        }
    }

    private static func strdupOrNil(_ string: String) -> UnsafeMutablePointer<CChar>? {
        string.withCString { strdup($0) }
    }

    // MARK: - The transfer

    private static func perform(
        _ request: HTTPRequest, endpoint: HTTPEndpoint, options: CurlHTTPClient.Options, cancel: CurlCancelSignal
    ) throws -> HTTPResponse {
        let target = endpoint.display
        func failure(_ what: String) -> HTTPTransportError {
            HTTPTransportError(kind: .other, message: "request to \(target) failed: \(what)")
        }

        // Parse the URL again with libcurl's own parser and apply the same rule to what libcurl
        // will actually connect to, so the two parsers cannot disagree about the host.
        var schemeBuffer = [CChar](repeating: 0, count: 16)
        var hostBuffer = [CChar](repeating: 0, count: 1024)
        var curlPort = 0
        let parse = sfcurl_url_parts(request.url, &schemeBuffer, schemeBuffer.count, &hostBuffer, hostBuffer.count, &curlPort)
        guard parse == 0 else {
            let reason = sfcurl_url_strerror(parse).map { String(cString: $0) } ?? "libcurl URL error \(parse)"
            throw HTTPTransportError(
                kind: .insecureURL, message: "refusing to send \(request.method) to a malformed URL (\(reason))")
        }
        let curlEndpoint = HTTPEndpoint(
            scheme: string(schemeBuffer).lowercased(), host: string(hostBuffer).lowercased(), port: curlPort)
        try HTTPURLPolicy.check(curlEndpoint, method: request.method)
        guard curlEndpoint.scheme == endpoint.scheme, curlEndpoint.port == endpoint.port,
            curlEndpoint.isLoopback == endpoint.isLoopback
        else {
            throw HTTPTransportError(
                kind: .insecureURL,
                message: "refusing to send \(request.method) to \(endpoint.scheme)://\(target): "
                    + "libcurl reads the URL as \(curlEndpoint.scheme)://\(curlEndpoint.display)")
        }

        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { if let headerList { sfcurl_slist_free_all(headerList) } }
        guard let handle = sfcurl_easy_init() else { throw failure("curl_easy_init failed") }
        // Cleaned up before the header list and error buffer above are released.
        defer { sfcurl_easy_cleanup(handle) }

        func set(_ code: CURLcode, _ what: String) throws(HTTPTransportError) {
            if code != CURLE_OK {
                throw failure("could not set \(what): \(string(sfcurl_easy_strerror(code)))")
            }
        }
        try set(sfcurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try set(sfcurl_setopt_string(handle, CURLOPT_URL, request.url), "CURLOPT_URL")
        try set(sfcurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try set(sfcurl_restrict_protocols(handle), "CURLOPT_PROTOCOLS_STR")
        try set(sfcurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        try set(sfcurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        try set(sfcurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        try set(
            sfcurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(options.connectTimeout)),
            "CURLOPT_CONNECTTIMEOUT_MS")
        try set(sfcurl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(options.totalTimeout)), "CURLOPT_TIMEOUT_MS")
        if let caBundlePath = options.caBundlePath {
            try set(sfcurl_setopt_string(handle, CURLOPT_CAINFO, caBundlePath), "CURLOPT_CAINFO")
        }
        if endpoint.isLoopback {
            // Loopback traffic never goes through a proxy, whatever the environment says.
            try set(sfcurl_setopt_string(handle, CURLOPT_NOPROXY, "*"), "CURLOPT_NOPROXY")
        }
        if !options.userAgent.isEmpty {
            try set(sfcurl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent), "CURLOPT_USERAGENT")
        }
        let limit = max(0, options.maxResponseBodySize)
        try set(sfcurl_setopt_off_t(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limit)), "CURLOPT_MAXFILESIZE_LARGE")

        // Method and body. COPYPOSTFIELDS copies the bytes, so the Swift array need not outlive this.
        let method = request.method
        let sendsBody = method == "POST" || !request.body.isEmpty
        if method == "GET" && !sendsBody {
            try set(sfcurl_setopt_long(handle, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
        } else if method == "HEAD" && !sendsBody {
            try set(sfcurl_setopt_long(handle, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
        } else {
            if sendsBody {
                try set(
                    sfcurl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
                    "CURLOPT_POSTFIELDSIZE_LARGE")
                let code = request.body.withUnsafeBytes { bytes -> CURLcode in
                    if let base = bytes.baseAddress {
                        return sfcurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
                    }
                    return sfcurl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
                }
                try set(code, "CURLOPT_COPYPOSTFIELDS")
            }
            if method != "POST" {
                try set(sfcurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "CURLOPT_CUSTOMREQUEST")
            }
        }

        // Headers, in the order given. "Name;" is libcurl's way to send an empty value. Unless the
        // caller asks for it, no "Expect: 100-continue" (it costs a round trip on large bodies).
        var lines = request.headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        if sendsBody && !request.headers.contains(where: { $0.name.lowercased() == "expect" }) {
            lines.append("Expect:")
        }
        for line in lines {
            guard let appended = sfcurl_slist_append(headerList, line) else { throw failure("out of memory") }
            headerList = appended
        }
        if let headerList {
            try set(sfcurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER")
        }

        // Response collection through callbacks that receive `collector` as their context.
        let collector = ResponseCollector(limit: limit)
        let code: CURLcode = try withExtendedLifetime(collector) {
            let context = Unmanaged.passUnretained(collector).toOpaque()
            try set(
                sfcurl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                    let length = size * count
                    guard let data, let context else { return length }
                    Unmanaged<ResponseCollector>.fromOpaque(context).takeUnretainedValue()
                        .headerLine(UnsafeRawBufferPointer(start: data, count: length))
                    return length
                }, "CURLOPT_HEADERFUNCTION")
            try set(sfcurl_setopt_pointer(handle, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
            try set(
                sfcurl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    let length = size * count
                    guard let data, let context else { return length }
                    let accepted = Unmanaged<ResponseCollector>.fromOpaque(context).takeUnretainedValue()
                        .bodyData(UnsafeRawBufferPointer(start: data, count: length))
                    return accepted ? length : 0  // anything but `length` aborts with CURLE_WRITE_ERROR
                }, "CURLOPT_WRITEFUNCTION")
            try set(sfcurl_setopt_pointer(handle, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
            return sfcurl_perform(handle, cancel.pointer)
        }

        if code == CURLE_ABORTED_BY_CALLBACK && cancel.isSignalled {
            throw CancellationError()
        }
        if collector.bodyTooLarge || code == CURLE_FILESIZE_EXCEEDED {
            throw failure("the response body is larger than the \(limitText(limit)) limit")
        }
        guard code == CURLE_OK else {
            var detail = singleLine(string(errorBuffer))
            if detail.isEmpty { detail = string(sfcurl_easy_strerror(code)) }
            // libcurl 7.88 says "Couldn't connect to server"; the system's reason is more useful.
            var osError = 0
            if code == CURLE_COULDNT_CONNECT, sfcurl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError) == CURLE_OK,
                osError != 0, let reason = strerror(Int32(osError)).map({ String(cString: $0) }), !detail.contains(reason)
            {
                detail += ": \(reason)"
            }
            throw transportError(code, target: target, detail: detail)
        }
        var status = 0
        try set(sfcurl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status), "CURLINFO_RESPONSE_CODE")
        return HTTPResponse(status: status, headers: collector.headers, body: collector.body)
    }

    /// Maps a failed transfer to the error kinds of `HTTPTransportError`, with a one-line message
    /// naming `target` (`host:port`) and libcurl's own explanation.
    static func transportError(_ code: CURLcode, target: String, detail: String) -> HTTPTransportError {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return HTTPTransportError(kind: .resolve, message: "could not resolve \(target) (\(detail))")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPTransportError(kind: .resolve, message: "could not resolve the proxy for \(target) (\(detail))")
        case CURLE_COULDNT_CONNECT:
            return HTTPTransportError(kind: .connect, message: "could not connect to \(target) (\(detail))")
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPTransportError(kind: .timeout, message: "request to \(target) timed out (\(detail))")
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return HTTPTransportError(kind: .tls, message: "TLS connection to \(target) failed (\(detail))")
        default:
            return HTTPTransportError(kind: .other, message: "request to \(target) failed (\(detail))")
        }
    }

    // MARK: - Helpers

    /// A timeout in whole milliseconds for libcurl, at least 1 (0 would mean "no timeout").
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        if seconds >= Int64(Int.max / 1000) { return Int.max / 1000 }
        let total = Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
        return max(1, total)
    }

    private static func limitText(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes)-byte"
    }

    /// RFC 9110 `tchar`: the bytes allowed in a method or a header name.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func string(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { string($0.baseAddress) }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    private static func string(_ pointer: UnsafeMutablePointer<CChar>) -> String {
        String(cString: pointer)
    }

    /// Collapses line breaks and trims, so an error message stays on one line.
    static func singleLine(_ text: String) -> String {
        let joined = text.split(whereSeparator: { $0.isNewline }).joined(separator: " ")
        return joined.trimmedOf(" \t")
    }
}

/// Collects the final response's header fields and body from libcurl's callbacks, on the
/// transfer thread only.
final class ResponseCollector {
    /// Header fields of the latest response seen, names lower-cased; repeated fields joined by ", ".
    private(set) var headers: [String: String] = [:]
    /// The body bytes received so far.
    private(set) var body: [UInt8] = []
    /// Whether the body went over `limit` (the transfer was then aborted).
    private(set) var bodyTooLarge = false
    private var lastName: String?
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// One header line as libcurl delivers it, CRLF included. A status line starts a new response
    /// (after `100 Continue`, or a proxy's CONNECT response), so earlier fields are dropped.
    func headerLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers = [:]
            lastName = nil
            return
        }
        if line.isEmpty { return }
        if line.first == " " || line.first == "\t" {
            // obs-fold: a continuation of the previous field.
            if let lastName, let previous = headers[lastName] {
                headers[lastName] = previous + " " + line.trimmedOf(" \t")
            }
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmedOf(" \t").lowercased()
        let value = line[line.index(after: colon)...].trimmedOf(" \t")
        if let previous = headers[name] {
            headers[name] = previous + ", " + value
        } else {
            headers[name] = value
        }
        lastName = name
    }

    /// A chunk of the body. Returns `false` (aborting the transfer) once the body exceeds `limit`.
    func bodyData(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if body.count + bytes.count > limit {
            bodyTooLarge = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters from `set`.
    fileprivate func trimmedOf(_ set: String) -> String {
        let characters = Set(set)
        let start = firstIndex(where: { !characters.contains($0) }) ?? endIndex
        let end = lastIndex(where: { !characters.contains($0) }).map { index(after: $0) } ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
