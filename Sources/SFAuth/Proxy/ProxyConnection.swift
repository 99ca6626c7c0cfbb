import Glibc
import SFAuthCore

/// Serves one client connection on its own thread: request after request (HTTP/1.1 keep-alive),
/// each checked by `ProxyRules`, sent upstream with the token through one reused libcurl handle,
/// renewed and sent once more after a 401 when its body could be kept, and answered as it arrives.
final class ProxyConnection {
    private let stream: ProxyClientStream
    private let service: ProxyService
    private let upstream: ProxyUpstreamClient

    init(stream: ProxyClientStream, service: ProxyService) {
        self.stream = stream
        self.service = service
        upstream = ProxyUpstreamClient(
            connectTimeoutMilliseconds: service.configuration.connectTimeoutMilliseconds, isLoopback: service.upstreamIsLoopback,
            caBundlePath: service.configuration.caBundlePath)
    }

    /// Serves requests until the client closes, goes idle, or one cannot be followed by another.
    func run() {
        defer { stream.close() }
        while true {
            switch stream.readHead(limit: service.configuration.maxHeadBytes) {
            case .closed:
                return
            case .tooLarge:
                service.log.error("refused a request: its head is over \(service.configuration.maxHeadBytes >> 10) KiB (431)")
                ProxyResponseWriter.answer(431, "the request head is too large", to: stream, keepAlive: false, method: "GET")
                return
            case .head(let bytes):
                if !serve(head: bytes) { return }
            }
        }
    }

    /// Serves one request; returns whether the connection can take another.
    private func serve(head bytes: [UInt8]) -> Bool {
        let started = GlibcExtras.monotonicMilliseconds()
        let head: ProxyRequestHead
        let target: String
        let framing: ProxyRequestHead.BodyFraming
        do {
            head = try ProxyRequestHead.parse(bytes)
            target = try ProxyRules.check(head, authorities: service.authorities)
            framing = try head.bodyFraming()
        } catch {
            let line = bytes.prefix(while: { $0 != 0x0D && $0 != 0x0A }).prefix(200)
            service.log.error("refused \(String(decoding: line, as: UTF8.self)): \(error.reason) (\(error.status))")
            ProxyResponseWriter.answer(error.status, error.reason, to: stream, keepAlive: false, method: "GET")
            return false
        }
        let path = String(target.prefix(while: { $0 != "?" }))
        func done(_ status: Int) {
            service.log.request(method: head.method, path: path, status: status, milliseconds: GlibcExtras.monotonicMilliseconds() - started)
        }

        if framing != .none && head.expectsContinue { stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        let rest = ProxyRequestBody(stream: stream, framing: framing)
        let limit = service.configuration.maxReplayBody
        let body: ProxyUpstreamRequest.Body
        switch framing {
        case .none where ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"].contains(head.method):
            body = .none
        case .none:
            body = .buffered([])
        case .length(let length) where length > limit:
            body = .streamed(prefix: [], rest: rest, length: length)
        case .length, .chunked:
            switch rest.readPrefix(limit: limit) {
            case .complete(let bytes) where bytes.isEmpty && ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE"].contains(head.method):
                body = .none  // "Content-Length: 0" on a GET: no body to send
            case .complete(let bytes): body = .buffered(bytes)
            case .over(let bytes): body = .streamed(prefix: bytes, rest: rest, length: { if case .length(let n) = framing { n } else { nil } }())
            case .failed:
                service.log.error("\(head.method) \(path): the request body was malformed or cut short (400)")
                ProxyResponseWriter.answer(400, "the request body was malformed or cut short", to: stream, keepAlive: false, method: head.method)
                return false
            }
        }
        var replayable = true
        if case .streamed = body { replayable = false }

        var request = ProxyUpstreamRequest(
            method: head.method, url: service.configuration.upstream.url(for: target), fields: ProxyRules.forwardedRequestFields(head),
            token: "", body: body)
        var rejected: String?
        for attempt in 1...2 {
            switch service.tokens.token(rejected: rejected) {
            case .success(let token): request.token = token
            case .failure(let error):
                let (status, text) = service.tokenFailure(error)
                service.log.error("\(head.method) \(path): \(text) (\(status))")
                ProxyResponseWriter.answer(status, text, to: stream, keepAlive: head.keepsAlive && rest.isComplete, method: head.method)
                done(status)
                return head.keepsAlive && rest.isComplete
            }
            let writer = ProxyResponseWriter(
                stream: stream, method: head.method, minorVersion: head.minorVersion, clientKeepsAlive: head.keepsAlive,
                holdsBack401: attempt == 1 && replayable)
            let outcome = upstream.send(request, to: writer)
            switch outcome {
            case .completed where writer.heldBack:
                service.log.notice("\(head.method) \(path): the upstream answered 401; renewing the token and sending the request again")
                rejected = request.token
                continue
            case .completed:
                if writer.status == 401 {
                    service.tokens.invalidate(request.token)
                    if !replayable {
                        service.log.error(
                            "\(head.method) \(path): the upstream answered 401 and the request was not sent again: its body is over --max-replay-body (\(limit) bytes) and was streamed, not kept; the next request gets a renewed token"
                        )
                    }
                }
                done(writer.status)
                return writer.finish() && rest.isComplete
            case .failed(let message) where !writer.started:
                service.log.error("\(head.method) \(path): \(message) (502)")
                ProxyResponseWriter.answer(502, "the upstream did not answer: \(message)", to: stream, keepAlive: false, method: head.method)
                done(502)
                return false
            case .failed(let message):
                service.log.error("\(head.method) \(path): the upstream's response broke off: \(message)")
                done(writer.status)
                return false
            case .clientGone:
                done(writer.status)
                return false
            }
        }
        return false
    }
}
