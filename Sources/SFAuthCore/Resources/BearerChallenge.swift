/// A `Bearer` challenge from a `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1): what a
/// protected resource says when it turns a request away — where its metadata is, which scopes it
/// wants, and why the token was not enough.
public struct BearerChallenge: Sendable, Equatable {
    /// `error`: `invalid_token`, `insufficient_scope`, `invalid_request` (RFC 6750 §3.1), when given.
    public var error: String?
    /// `error_description`, when given.
    public var errorDescription: String?
    /// `scope`: the scopes the resource wants for this request, space-separated on the wire; empty
    /// when not given.
    public var scopes: [String]
    /// `resource_metadata`: the URL of the resource's metadata (RFC 9728 §5.1), when given.
    public var resourceMetadata: String?

    /// Creates a challenge from its parameters.
    public init(error: String? = nil, errorDescription: String? = nil, scopes: [String] = [], resourceMetadata: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.scopes = scopes
        self.resourceMetadata = resourceMetadata
    }

    /// Whether the resource wants a token with more scopes (`insufficient_scope`, RFC 6750 §3.1).
    public var wantsMoreScope: Bool { error == "insufficient_scope" }

    /// The `Bearer` challenge of a `401` or `403` response, when it has one.
    public static func of(_ response: HTTPResponse) -> BearerChallenge? {
        guard response.status == 401 || response.status == 403, let header = response.headers["www-authenticate"] else { return nil }
        return parse(header)
    }

    /// The `Bearer` challenge in a `WWW-Authenticate` value (RFC 9110 §11.6.1): one challenge or
    /// several, comma-separated (as repeated fields are joined); `nil` when none is `Bearer`.
    public static func parse(_ header: String) -> BearerChallenge? {
        guard let parameters = AuthenticationChallenges(header).parameters(ofScheme: "bearer") else { return nil }
        return BearerChallenge(
            error: parameters["error"], errorDescription: parameters["error_description"],
            scopes: parameters["scope"].map { $0.split(separator: " ").map(String.init) } ?? [],
            resourceMetadata: parameters["resource_metadata"])
    }
}

/// The challenges of a `WWW-Authenticate` value, read by RFC 9110 §11.6.1's grammar:
/// `scheme [ token68 / #( name = ( token / quoted-string ) ) ]`, challenges separated by commas.
struct AuthenticationChallenges {
    /// Each challenge's scheme (lower-cased) and parameters (names lower-cased; a token68 is dropped).
    var challenges: [(scheme: String, parameters: [String: String])] = []

    init(_ header: String) {
        var scanner = Scanner(Array(header.utf8))
        while true {
            scanner.skip { $0 == .space || $0 == .tab || $0 == .comma }
            guard let scheme = scanner.token() else { break }
            var parameters: [String: String] = [:]
            while true {
                let mark = scanner.position
                scanner.skip { $0 == .space || $0 == .tab || $0 == .comma }
                guard let name = scanner.token() else { break }
                scanner.skip { $0 == .space || $0 == .tab }
                guard scanner.take(.equals) else {
                    // A token not followed by "=": the next challenge's scheme.
                    scanner.position = mark
                    break
                }
                scanner.skip { $0 == .space || $0 == .tab }
                if scanner.peek == .equals {
                    // A token68 ("abc==") rather than a parameter.
                    scanner.skip { $0 == .equals }
                    continue
                }
                let value = scanner.quotedString() ?? scanner.token() ?? ""
                let key = name.lowercased()
                if parameters[key] == nil { parameters[key] = value }
            }
            challenges.append((scheme.lowercased(), parameters))
        }
    }

    /// The parameters of the first challenge of `scheme` (lower-case).
    func parameters(ofScheme scheme: String) -> [String: String]? {
        challenges.first { $0.scheme == scheme }?.parameters
    }

    /// A cursor over the header's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skip(while matches: (UInt8) -> Bool) {
            while let byte = peek, matches(byte) { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// RFC 9110 `token` (tchar: letters, digits and !#$%&'*+-.^_`|~); also the `/` of a token68.
        mutating func token() -> String? {
            let start = position
            skip { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || Array("!#$%&'*+-.^_`|~/".utf8).contains(byte)
            }
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }

        /// RFC 9110 `quoted-string`, unescaped; `nil` when not at a `"`.
        mutating func quotedString() -> String? {
            guard take(.quote) else { return nil }
            var value: [UInt8] = []
            while let byte = peek {
                position += 1
                if byte == .quote { break }
                if byte == .backslash, let escaped = peek {
                    position += 1
                    value.append(escaped)
                } else {
                    value.append(byte)
                }
            }
            return String(decoding: value, as: UTF8.self)
        }
    }
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
}
