import CCurl
import Glibc
import SFAuthCore

/// One request for the upstream, already checked: the proxy's rules have run and the token is known.
struct ProxyUpstreamRequest {
    /// The method, as the client sent it.
    var method: String
    /// The upstream URL: origin, base path, the client's origin-form target.
    var url: String
    /// The client's fields that cross (`ProxyRules.forwardedRequestFields`).
    var fields: [ProxyHeaderField]
    /// The access token, sent as `Authorization: Bearer`.
    var token: String
    /// The body.
    var body: Body

    enum Body {
        /// No body (GET, HEAD, DELETE… without one).
        case none
        /// The whole body, in memory: can be sent again after a 401.
        case buffered([UInt8])
        /// Bytes already read, then the rest from the client as it arrives; `length` when known
        /// (`Content-Length`), else sent chunked. Can be sent once only.
        case streamed(prefix: [UInt8], rest: ProxyRequestBody, length: Int?)
    }
}

/// Receives the upstream's response as it arrives, on the transfer's thread.
protocol ProxyResponseSink: AnyObject {
    /// The final response's status and fields (1xx responses are skipped). Returns `false` to drop
    /// the body (the request will be sent again).
    func head(status: Int, fields: [ProxyHeaderField]) -> Bool
    /// A piece of the body, as libcurl delivers it (decoded from upstream's chunking, never from
    /// its content coding). Returns `false` when the client is gone, which aborts the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool
}

/// How a transfer ended.
enum ProxyTransferOutcome {
    /// A whole response was received (and passed to the sink).
    case completed
    /// No response, or a response cut short: the message names upstream and libcurl's reason.
    case failed(String)
    /// The client went away (a write to it failed, or its request body broke off).
    case clientGone
}

/// The upstream side of one client connection: one libcurl easy handle reused for each of the
/// connection's requests, so its connection to the upstream (and TLS session) is reused too.
final class ProxyUpstreamClient {
    private var handle: UnsafeMutableRawPointer?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let connectTimeoutMilliseconds: Int
    private let isLoopback: Bool
    private let caBundlePath: String?

    init(connectTimeoutMilliseconds: Int, isLoopback: Bool, caBundlePath: String?) {
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.isLoopback = isLoopback
        self.caBundlePath = caBundlePath
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        if let handle { sfcurl_easy_cleanup(handle) }
        errorBuffer.deallocate()
    }

    /// Sends `request` and passes the response to `sink` as it arrives. libcurl must be loaded.
    func send(_ request: ProxyUpstreamRequest, to sink: any ProxyResponseSink) -> ProxyTransferOutcome {
        if let handle, sfcurl_easy_reset(handle) != 0 {
            sfcurl_easy_cleanup(handle)
            self.handle = nil
        }
        if handle == nil { handle = sfcurl_easy_init() }
        guard let handle else { return .failed("curl_easy_init failed") }
        errorBuffer[0] = 0

        let context = TransferContext(sink: sink, body: request.body)
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { if let headerList { sfcurl_slist_free_all(headerList) } }
        var lines = request.fields.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        lines.append("Authorization: Bearer \(request.token)")
        // libcurl adds fields of its own unless told not to; the client's request is what goes.
        let names = Set(request.fields.map { $0.name.lowercased() })
        if !names.contains("accept") { lines.append("Accept:") }
        var hasBody = false
        if case .none = request.body {} else { hasBody = true }
        if hasBody {
            lines.append("Expect:")  // no 100-continue round trip
            if !names.contains("content-type") { lines.append("Content-Type:") }
        }
        for line in lines {
            guard let appended = sfcurl_slist_append(headerList, line) else { return .failed("out of memory") }
            headerList = appended
        }

        var failedOption: String?
        func set(_ code: CURLcode, _ name: String) {
            if code != CURLE_OK && failedOption == nil { failedOption = name }
        }
        set(sfcurl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        set(sfcurl_setopt_string(handle, CURLOPT_URL, request.url), "CURLOPT_URL")
        set(sfcurl_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        set(sfcurl_restrict_protocols(handle), "CURLOPT_PROTOCOLS_STR")
        set(sfcurl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "CURLOPT_SSL_VERIFYPEER")
        set(sfcurl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "CURLOPT_SSL_VERIFYHOST")
        set(sfcurl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0), "CURLOPT_FOLLOWLOCATION")
        // The path was checked as sent: libcurl must not rewrite it (RFC 3986 dot-segment removal).
        set(sfcurl_setopt_long(handle, CURLOPT_PATH_AS_IS, 1), "CURLOPT_PATH_AS_IS")
        // Through an https_proxy, the CONNECT answer is not the upstream's response head.
        set(sfcurl_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "CURLOPT_SUPPRESS_CONNECT_HEADERS")
        // The body goes to the client as the upstream encoded it (gzip stays gzip).
        set(sfcurl_setopt_long(handle, CURLOPT_HTTP_CONTENT_DECODING, 0), "CURLOPT_HTTP_CONTENT_DECODING")
        set(sfcurl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds), "CURLOPT_CONNECTTIMEOUT_MS")
        // No total timeout: a stream (SSE) may rightly last for hours.
        if isLoopback { set(sfcurl_setopt_string(handle, CURLOPT_NOPROXY, "*"), "CURLOPT_NOPROXY") }
        if let caBundlePath { set(sfcurl_setopt_string(handle, CURLOPT_CAINFO, caBundlePath), "CURLOPT_CAINFO") }

        switch request.body {
        case .none:
            switch request.method {
            case "GET": set(sfcurl_setopt_long(handle, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
            case "HEAD": set(sfcurl_setopt_long(handle, CURLOPT_NOBODY, 1), "CURLOPT_NOBODY")
            default:
                set(sfcurl_setopt_long(handle, CURLOPT_HTTPGET, 1), "CURLOPT_HTTPGET")
                set(sfcurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method), "CURLOPT_CUSTOMREQUEST")
            }
        case .buffered(let bytes):
            set(sfcurl_setopt_long(handle, CURLOPT_POST, 1), "CURLOPT_POST")
            set(sfcurl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
            let code = bytes.withUnsafeBytes { raw -> CURLcode in
                guard let base = raw.baseAddress else { return sfcurl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "") }
                return sfcurl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
            }
            set(code, "CURLOPT_COPYPOSTFIELDS")
            if request.method != "POST" { set(sfcurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method), "CURLOPT_CUSTOMREQUEST") }
        case .streamed(_, _, let length):
            set(sfcurl_setopt_long(handle, CURLOPT_POST, 1), "CURLOPT_POST")
            // -1: unknown, so libcurl sends it chunked.
            set(sfcurl_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(length ?? -1)), "CURLOPT_POSTFIELDSIZE_LARGE")
            set(
                sfcurl_setopt_data_callback(handle, CURLOPT_READFUNCTION) { buffer, size, count, context in
                    guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
                    return Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
                        .readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
                }, "CURLOPT_READFUNCTION")
            if request.method != "POST" { set(sfcurl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method), "CURLOPT_CUSTOMREQUEST") }
        }
        if let headerList { set(sfcurl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList), "CURLOPT_HTTPHEADER") }

        let code: CURLcode = withExtendedLifetime(context) {
            let opaque = Unmanaged.passUnretained(context).toOpaque()
            set(
                sfcurl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                    let length = size * count
                    guard let data, let context else { return length }
                    let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
                    return transfer.headerLine(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
                }, "CURLOPT_HEADERFUNCTION")
            set(sfcurl_setopt_pointer(handle, CURLOPT_HEADERDATA, opaque), "CURLOPT_HEADERDATA")
            set(
                sfcurl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                    let length = size * count
                    guard let data, let context else { return length }
                    let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
                    return transfer.bodyData(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
                }, "CURLOPT_WRITEFUNCTION")
            set(sfcurl_setopt_pointer(handle, CURLOPT_WRITEDATA, opaque), "CURLOPT_WRITEDATA")
            set(sfcurl_setopt_pointer(handle, CURLOPT_READDATA, opaque), "CURLOPT_READDATA")
            if failedOption != nil { return CURLE_FAILED_INIT }  // reported below
            return sfcurl_perform(handle, nil)
        }
        if let failedOption { return .failed("could not set \(failedOption)") }
        if context.clientGone || context.bodyFailed { return .clientGone }
        guard code == CURLE_OK else {
            var detail = String(cString: errorBuffer)
            if detail.isEmpty { detail = String(cString: sfcurl_easy_strerror(code)) }
            var osError = 0
            if code == CURLE_COULDNT_CONNECT, sfcurl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osError) == CURLE_OK, osError != 0 {
                let reason = GlibcExtras.errorText(Int32(osError))
                if !detail.contains(reason) { detail += ": \(reason)" }
            }
            return .failed(CurlTransfer.transportError(code, target: Self.target(of: request.url), detail: CurlTransfer.singleLine(detail)).message)
        }
        if !context.headDone { return .failed("the upstream answered without a response head") }
        return .completed
    }

    /// `host:port` of a URL, for messages.
    private static func target(of url: String) -> String {
        (try? HTTPURLPolicy.endpoint(for: url, method: "GET").display) ?? "the upstream"
    }
}

/// One transfer's state, shared with libcurl's callbacks on the transfer's thread.
private final class TransferContext {
    let sink: any ProxyResponseSink
    private var status = 0
    private var fields: [ProxyHeaderField] = []
    private(set) var headDone = false
    private var forwarding = true
    private(set) var clientGone = false
    private(set) var bodyFailed = false
    private var prefix: [UInt8] = []
    private var prefixOffset = 0
    private var rest: ProxyRequestBody?

    init(sink: any ProxyResponseSink, body: ProxyUpstreamRequest.Body) {
        self.sink = sink
        if case .streamed(let prefix, let rest, _) = body {
            self.prefix = prefix
            self.rest = rest
        }
    }

    /// A header line, CRLF included. A status line starts a response; the empty line ends its head,
    /// which goes to the sink unless it is a 1xx. Lines after that (trailers) are dropped.
    func headerLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if headDone { return true }
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let line = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
            fields = []
            return true
        }
        if line.isEmpty {
            if (100..<200).contains(status) { return true }  // 100 Continue, 103 Early Hints: not passed on
            headDone = true
            forwarding = sink.head(status: status, fields: fields)
            return true
        }
        if line.first == " " || line.first == "\t", !fields.isEmpty {
            fields[fields.count - 1].value += " " + line.trimmingOWS  // obs-fold
            return true
        }
        guard let colon = line.firstIndex(of: ":") else { return true }
        fields.append(ProxyHeaderField(name: String(line[..<colon]).trimmingOWS, value: String(line[line.index(after: colon)...]).trimmingOWS))
        return true
    }

    func bodyData(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard forwarding else { return true }  // a 401 about to be retried: its body is dropped
        if !sink.body(bytes) {
            clientGone = true
            return false
        }
        return true
    }

    /// Fills libcurl's upload buffer: the bytes read ahead, then the client's as they arrive.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if prefixOffset < prefix.count {
            let count = min(buffer.count, prefix.count - prefixOffset)
            prefix[prefixOffset..<prefixOffset + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
            prefixOffset += count
            return count
        }
        guard let rest, let bytes = rest.next(maximum: buffer.count) else {
            bodyFailed = true
            return Int(CURL_READFUNC_ABORT)
        }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        return bytes.count
    }
}
