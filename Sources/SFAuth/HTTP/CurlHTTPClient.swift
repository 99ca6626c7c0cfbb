import CCurl
import SFAuthCore

/// An `HTTPClient` that sends requests with libcurl.
///
/// libcurl is not linked: it is loaded with `dlopen("libcurl.so.4")` by the first `send`, so a
/// process that makes no request (such as `sfauth token` with a cached token) never pays the
/// 6–8 ms it costs to load libcurl and its ~40 dependencies. Creating a client loads nothing.
///
/// Every request follows the same rules:
/// - only `https`, or plain `http` to a loopback host (`127.0.0.0/8`, `[::1]`, `localhost`),
///   checked before any network I/O;
/// - TLS peer and host verification always on; redirects are never followed;
/// - the standard proxy variables (`https_proxy`, `http_proxy`, `no_proxy`, `all_proxy`) are
///   honoured as libcurl does, except that loopback requests never go through a proxy;
/// - a 4xx or 5xx status is a response, not an error; only a missing response throws.
///
/// Each transfer runs on a dedicated thread, not on Swift's cooperative pool. Cancelling the
/// calling task aborts the transfer and throws `CancellationError`. Request bodies are never logged.
public final class CurlHTTPClient: HTTPClient {
    /// Limits and identification for every request a client sends.
    public struct Options: Sendable {
        /// The longest wait for the TCP and TLS connection to be established. Default: 10 seconds.
        public var connectTimeout: Duration
        /// The longest a whole request may take, connection included. Default: 30 seconds.
        public var totalTimeout: Duration
        /// The `User-Agent` header sent unless the request sets its own. Default: `"sfauth/" + the version in the file VERSION`.
        public var userAgent: String
        /// A PEM file of CA certificates to trust instead of the system's store, or `nil` (the
        /// default) for the system store. Verification stays on either way.
        public var caBundlePath: String?
        /// The largest response body accepted, in bytes; a larger one fails the request with an
        /// `.other` error. Default: 4 MiB.
        public var maxResponseBodySize: Int
        /// The shared-library names tried, in order, on the first request of the process.
        package var libraryNames: [String] = ["libcurl.so.4", "libcurl-gnutls.so.4"]

        /// Creates options; every parameter has the default documented on its property.
        public init(
            connectTimeout: Duration = .seconds(10),
            totalTimeout: Duration = .seconds(30),
            userAgent: String = "sfauth/0.1.0",  // = "sfauth/" + VERSION, checked by scripts/build-release
            caBundlePath: String? = nil,
            maxResponseBodySize: Int = 4 << 20
        ) {
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.userAgent = userAgent
            self.caBundlePath = caBundlePath
            self.maxResponseBodySize = maxResponseBodySize
        }
    }

    /// The options every request of this client uses.
    public let options: Options

    /// Creates a client. Loads nothing: libcurl is loaded by the first `send` of the process.
    public init(options: Options = .init()) {
        self.options = options
    }

    /// Sends `request` with libcurl and returns the final response, whatever its status.
    ///
    /// Headers are sent in the given order; libcurl adds `Host`, `Accept: */*`, `Content-Length`
    /// and, for a body without a `Content-Type`, `application/x-www-form-urlencoded`. The response's
    /// header names are lower-cased and only the final response's fields are kept (not those of a
    /// `100 Continue`).
    ///
    /// - Throws: `HTTPTransportError` — `.insecureURL` (before any I/O) for anything but https or
    ///   http to a loopback host; `.unavailable` when libcurl cannot be loaded; `.resolve`,
    ///   `.connect`, `.tls`, `.timeout` or `.other` when no response arrived.
    ///   `CancellationError` when the calling task is cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let endpoint = try HTTPURLPolicy.endpoint(for: request.url, method: request.method)
        try CurlTransfer.validate(request, endpoint: endpoint)
        try Task.checkCancellation()
        guard let cancel = CurlCancelSignal() else {
            throw HTTPTransportError(kind: .other, message: "request to \(endpoint.display) failed: out of memory")
        }
        let options = self.options
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                do {
                    try DetachedThread.start {
                        continuation.resume(
                            with: CurlTransfer.run(request, endpoint: endpoint, options: options, cancel: cancel))
                    }
                } catch {
                    continuation.resume(
                        throwing: HTTPTransportError(
                            kind: .other, message: "request to \(endpoint.display) failed: could not start a thread (\(error))"))
                }
            }
        } onCancel: {
            cancel.signal()
        }
    }

    /// Whether libcurl has been loaded in this process (by the first `send`).
    package static var isLibcurlLoaded: Bool { sfcurl_is_loaded() != 0 }

    /// The loaded libcurl's version string (`libcurl/7.88.1 OpenSSL/…`), or `nil` before it is loaded.
    package static var libcurlVersion: String? { sfcurl_version().map { String(cString: $0) } }
}

/// A transfer's cancellation flag, shared by the task's cancellation handler and the transfer thread.
final class CurlCancelSignal: @unchecked Sendable {
    /// The C object, for `sfcurl_perform`. It is thread-safe; this class only owns its lifetime.
    let pointer: OpaquePointer

    init?() {
        guard let pointer = sfcurl_cancel_create() else { return nil }
        self.pointer = pointer
    }

    deinit { sfcurl_cancel_destroy(pointer) }

    /// Sets the flag and wakes the transfer if it is waiting on the network.
    func signal() { sfcurl_cancel_signal(pointer) }

    /// Whether `signal()` has been called.
    var isSignalled: Bool { sfcurl_cancel_is_signalled(pointer) != 0 }
}
