/// An HTTP request described as a value, so the core can build exact requests without doing I/O.
///
/// The SFAuth module's `HTTPClient` implementations send these; tests compare them byte for byte.
public struct HTTPRequest: Sendable, Equatable {
    /// The request method, e.g. `"POST"`.
    public var method: String
    /// The absolute URL, e.g. `https://login.salesforce.com/services/oauth2/token`.
    public var url: String
    /// Header fields in the order they are sent. Names are sent as given.
    public var headers: [(name: String, value: String)]
    /// The body bytes; empty for a request without a body.
    public var body: [UInt8]

    /// Creates a request.
    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The body decoded as UTF-8 (for tests and redacted logs).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Whether two requests have the same method, URL, headers (in order) and body.
    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body
            && lhs.headers.map { "\($0.name): \($0.value)" } == rhs.headers.map { "\($0.name): \($0.value)" }
    }
}

/// An HTTP response as a value: status, headers and the whole body.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code of the final response, e.g. `200`.
    public var status: Int
    /// Header fields of the final response, names lower-cased.
    public var headers: [String: String]
    /// The body bytes.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body decoded as UTF-8.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The media type of the body without parameters, lower-cased (`application/json`), if given.
    public var mediaType: String? {
        guard let value = headers["content-type"] else { return nil }
        return value.split(separator: ";").first.map { $0.trimmingWhitespace().lowercased() }
    }
}

extension Substring {
    func trimmingWhitespace() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
