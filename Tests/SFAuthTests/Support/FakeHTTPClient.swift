import Foundation
import SFAuth
import Synchronization
import Testing

/// The tests' one scripted `HTTPClient`: it answers each request from the first route that matches
/// it — a queue of replies (the last one optionally repeated) or a closure — and records every
/// request. A request that no route answers gets a connection error, as from a server that is not there.
///
/// ```swift
/// let endpoint = FakeHTTPClient()
///     .on(.url("https://idp.example/device_authorization"), reply: .json(200, #"{"device_code":"dc",...}"#))
///     .on(.url("https://idp.example/token"), replies: [.json(400, #"{"error":"authorization_pending"}"#)],
///         then: .json(200, #"{"access_token":"at"}"#))
/// ```
final class FakeHTTPClient: HTTPClient {
    /// One answer to a request.
    enum Reply: Sendable {
        /// This response.
        case response(HTTPResponse)
        /// No response: the transport failed.
        case failure(HTTPTransportError)

        /// A response with a JSON body (`content-type: application/json`).
        static func json(_ status: Int, _ body: String) -> Reply {
            .response(HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(body.utf8)))
        }

        /// A response with `body` and no content type, as some servers send.
        static func plain(_ status: Int, _ body: String = "") -> Reply {
            .response(HTTPResponse(status: status, body: Array(body.utf8)))
        }

        /// A connection that could not be made.
        static func networkError(_ message: String = "could not connect to idp.example:443") -> Reply {
            .failure(HTTPTransportError(kind: .connect, message: message))
        }
    }

    /// Which requests a route answers.
    struct Match: Sendable {
        let matches: @Sendable (HTTPRequest) -> Bool

        /// Every request.
        static let any = Match { _ in true }

        /// Requests to exactly this URL.
        static func url(_ url: String) -> Match { Match { $0.url == url } }

        /// Token requests of this grant type (RFC 6749 §4–6: the form body starts `grant_type=…&`).
        static func grantType(_ type: String) -> Match {
            Match { $0.bodyText.hasPrefix("grant_type=\(FormURLEncoding.encode(type))&") }
        }
    }

    private enum Answer {
        case queue([Reply], then: Reply?)
        case handler(@Sendable (HTTPRequest) async throws -> HTTPResponse)
    }

    private struct Route {
        var match: Match
        var answer: Answer
    }

    private let routes = Mutex<[Route]>([])
    private let recorded = Mutex<[HTTPRequest]>([])

    /// A client with no routes yet: every request fails until `on(…)` adds one.
    init() {}

    /// Answers every request with `replies` in order, then with `then` (or a connection error).
    convenience init(replies: [Reply], then: Reply? = nil) {
        self.init()
        on(.any, replies: replies, then: then)
    }

    /// Answers every request with `reply`.
    convenience init(always reply: Reply) {
        self.init(replies: [], then: reply)
    }

    /// Answers every request with what `handler` returns or throws for it.
    convenience init(_ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        self.init()
        on(.any, handler)
    }

    /// A client that fails the test if it is ever asked anything.
    static func refusingEveryRequest(sourceLocation: SourceLocation = #_sourceLocation) -> FakeHTTPClient {
        FakeHTTPClient { request in
            Issue.record("unexpected HTTP request to \(request.url)", sourceLocation: sourceLocation)
            throw HTTPTransportError(kind: .other, message: "no requests expected")
        }
    }

    /// Answers matching requests with `reply`, every time.
    @discardableResult
    func on(_ match: Match, reply: Reply) -> Self { on(match, replies: [], then: reply) }

    /// Answers matching requests with `replies` in order, then with `then`; when those run out,
    /// matching requests go on to the next route.
    @discardableResult
    func on(_ match: Match, replies: [Reply], then: Reply? = nil) -> Self {
        routes.withLock { $0.append(Route(match: match, answer: .queue(replies, then: then))) }
        return self
    }

    /// Answers matching requests with what `handler` returns or throws.
    @discardableResult
    func on(_ match: Match, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) -> Self {
        routes.withLock { $0.append(Route(match: match, answer: .handler(handler))) }
        return self
    }

    /// Every request so far, in order.
    var requests: [HTTPRequest] { recorded.withLock { $0 } }
    /// The bodies of every request so far, as text.
    var bodies: [String] { requests.map(\.bodyText) }
    /// How many requests were sent.
    var count: Int { recorded.withLock { $0.count } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        switch resolve(request) {
        case .reply(.response(let response)): return response
        case .reply(.failure(let error)): throw error
        case .handler(let handler): return try await handler(request)
        case .unanswered: throw HTTPTransportError(kind: .connect, message: "no scripted reply for \(request.method) \(request.url)")
        }
    }

    private enum Resolution {
        case reply(Reply)
        case handler(@Sendable (HTTPRequest) async throws -> HTTPResponse)
        case unanswered
    }

    /// The answer of the first matching route that still has one, taking it from its queue. The
    /// closure runs outside the lock (it may wait).
    private func resolve(_ request: HTTPRequest) -> Resolution {
        routes.withLock { routes in
            for index in routes.indices where routes[index].match.matches(request) {
                switch routes[index].answer {
                case .handler(let handler):
                    return .handler(handler)
                case .queue(var replies, let then):
                    if !replies.isEmpty {
                        let reply = replies.removeFirst()
                        routes[index].answer = .queue(replies, then: then)
                        return .reply(reply)
                    }
                    if let then { return .reply(then) }
                }
            }
            return .unanswered
        }
    }
}
