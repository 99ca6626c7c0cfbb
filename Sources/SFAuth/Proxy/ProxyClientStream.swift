import Glibc
import SFAuthCore

/// The client's side of one proxied connection: a blocking socket with a read-ahead buffer, read
/// and write time limits, and the body framings of RFC 9112 §6 (length and chunked).
///
/// Blocking I/O on a thread per connection keeps the proxy simple and its streaming immediate: a
/// byte that arrives is passed on by the thread waiting for it, with no event loop in between.
final class ProxyClientStream {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// Takes ownership of `fd` (closed by `close()`); makes it blocking, with `timeoutSeconds` on
    /// every read and write, so an idle or stuck client frees its thread.
    init(fd: Int32, timeoutSeconds: Int) {
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Small writes (a response head, one SSE event) go out at once, not after a delayed ACK.
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    func close() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }

    /// What reading a request head gave.
    enum HeadRead {
        case head([UInt8])
        /// The client closed (or went idle past the timeout) before sending a request.
        case closed
        case tooLarge
    }

    /// Reads up to the empty line that ends a head (`CRLF CRLF`, or `LF LF`), at most `limit` bytes.
    func readHead(limit: Int) -> HeadRead {
        var scanned = start
        while true {
            if let end = headEnd(from: scanned) {
                if end.headEnd - start > limit { return .tooLarge }  // however quickly it arrived
                let head = Array(buffer[start..<end.headEnd])
                start = end.bodyStart
                compact()
                return .head(head)
            }
            if buffer.count - start > limit { return .tooLarge }
            scanned = max(start, buffer.count - 3)
            if !fill() { return .closed }
        }
    }

    private func headEnd(from index: Int) -> (headEnd: Int, bodyStart: Int)? {
        var i = index
        while i < buffer.count {
            if buffer[i] == 0x0A {
                if i + 1 < buffer.count, buffer[i + 1] == 0x0A { return (i + 1, i + 2) }
                if i + 2 < buffer.count, buffer[i + 1] == 0x0D, buffer[i + 2] == 0x0A { return (i + 1, i + 3) }
            }
            i += 1
        }
        return nil
    }

    /// Reads more bytes into the buffer; `false` on end of stream, timeout or error.
    private func fill() -> Bool {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<count])
            return true
        }
    }

    /// What `recv` reads into, allocated once per connection.
    private var chunk = [UInt8](repeating: 0, count: 65536)

    private func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65536 {
            buffer.removeFirst(start)
            start = 0
        }
    }

    /// Up to `maximum` bytes (at least one), or `nil` at end of stream or on an error.
    func read(maximum: Int) -> [UInt8]? {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            if !fill() { return nil }
        }
        let end = min(buffer.count, start + maximum)
        let bytes = Array(buffer[start..<end])
        start = end
        compact()
        return bytes
    }

    /// One line without its line end, at most `limit` bytes; `nil` when longer, at end of stream or on an error.
    func readLine(limit: Int) -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                var line = Array(buffer[start..<newline])
                if line.last == 0x0D { line.removeLast() }
                start = newline + 1
                compact()
                return line
            }
            if buffer.count - start > limit || !fill() { return nil }
        }
    }

    /// Writes all of `bytes`; `false` when the client is gone (or stopped reading past the timeout).
    @discardableResult
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }
}

/// A request body as it arrives from the client, decoded from its framing: `next` returns the
/// payload bytes only (chunk sizes, extensions and trailers removed).
final class ProxyRequestBody {
    private let stream: ProxyClientStream
    private var remaining: Int
    private let chunked: Bool
    private var finished = false
    /// Whether the body was malformed or cut short (then the connection cannot be reused).
    private(set) var failed = false

    init(stream: ProxyClientStream, framing: ProxyRequestHead.BodyFraming) {
        self.stream = stream
        switch framing {
        case .none:
            remaining = 0
            chunked = false
            finished = true
        case .length(let length):
            remaining = length
            chunked = false
            finished = length == 0
        case .chunked:
            remaining = 0
            chunked = true
        }
    }

    /// Whether every byte of the body has been read.
    var isComplete: Bool { finished }

    /// The next bytes (at most `maximum`): empty at the end of the body, `nil` when it is malformed
    /// or the client went away.
    func next(maximum: Int) -> [UInt8]? {
        if finished { return [] }
        if failed { return nil }
        if chunked && remaining == 0 {
            guard let size = nextChunkSize() else { return fail() }
            if size == 0 {
                // Trailer fields, then the final empty line: read and dropped (RFC 9112 §7.1.2).
                while true {
                    guard let line = stream.readLine(limit: 8192) else { return fail() }
                    if line.isEmpty { break }
                }
                finished = true
                return []
            }
            remaining = size
        }
        guard let bytes = stream.read(maximum: min(maximum, remaining)) else { return fail() }
        remaining -= bytes.count
        if remaining == 0 {
            if chunked {
                guard stream.readLine(limit: 2) == [] else { return fail() }
            } else {
                finished = true
            }
        }
        return bytes
    }

    /// Reads the whole rest of the body into memory, up to `limit` bytes: `.complete` when it fits,
    /// `.over` with what was read when it does not, `.failed` when it is malformed or cut short.
    enum Prefix {
        case complete([UInt8])
        case over([UInt8])
        case failed
    }

    func readPrefix(limit: Int) -> Prefix {
        var bytes: [UInt8] = []
        while !finished {
            if bytes.count > limit { return .over(bytes) }
            guard let chunk = next(maximum: limit + 1 - bytes.count) else { return .failed }
            bytes += chunk
        }
        return bytes.count > limit ? .over(bytes) : .complete(bytes)
    }

    /// A chunk-size line: hexadecimal digits, optionally followed by `;` extensions.
    private func nextChunkSize() -> Int? {
        guard let line = stream.readLine(limit: 4096) else { return nil }
        let digits = line.prefix(while: { $0 != UInt8(ascii: ";") && $0 != 0x20 && $0 != 0x09 })
        guard !digits.isEmpty, digits.count <= 15, let size = Int(String(decoding: digits, as: UTF8.self), radix: 16), size >= 0 else {
            return nil
        }
        return size
    }

    private func fail() -> [UInt8]? {
        failed = true
        return nil
    }
}
