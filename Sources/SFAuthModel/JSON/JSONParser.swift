/// A strict JSON reader (RFC 8259) written out by hand.
///
/// Why not `JSONDecoder`: decoding through `Codable` instantiates generic metadata and scans the
/// program's protocol conformances at run time — in the front end, which answers `sfauth token`,
/// that was a quarter of its whole start. This reader makes the same decisions for the documents we
/// read (account records, server responses) with none of that machinery.
///
/// What it accepts: one value (any kind, as RFC 8259 §2 allows) between optional whitespace, an
/// optional UTF-8 byte order mark before it; strings of valid UTF-8 with the escapes of §7 (a lone
/// surrogate escape is refused); numbers in §6's grammar that are finite as a `Double`; nesting up to
/// `maximumDepth`. A repeated member name keeps its last value (as Python's `json` and
/// `JSONSerialization` do). Anything else is not JSON: `nil`.
struct JSONParser {
    /// Deeper documents are refused rather than risking the stack (no document we read nests past 8).
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0

    /// The value in `bytes`; `nil` when they are not exactly one JSON document.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.position = 3 }
        guard let value = parser.value() else { return nil }
        parser.skipWhitespace()
        return parser.position == bytes.count ? value : nil
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func value() -> JSONValue? {
        skipWhitespace()
        guard position < bytes.count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func object() -> JSONValue? {
        guard enterContainer() else { return nil }
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if consume(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let name = string() else { return nil }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")), let member = value() else { return nil }
            members[name] = member
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}")) ? .object(members) : nil
    }

    private mutating func array() -> JSONValue? {
        guard enterContainer() else { return nil }
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            guard let element = value() else { return nil }
            elements.append(element)
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "]")) ? .array(elements) : nil
    }

    /// Steps over the opening bracket or brace, counting the depth.
    private mutating func enterContainer() -> Bool {
        guard depth < Self.maximumDepth else { return false }
        depth += 1
        position += 1
        return true
    }

    /// A string, the opening quote at `position`.
    private mutating func string() -> String? {
        position += 1
        // Most strings have no escape: taken as one slice. An escape switches to building the text.
        let start = position
        var allASCII = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                return Self.text(bytes[start..<position - 1], allASCII: allASCII)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }  // control characters must be escaped (§7)
            if byte >= 0x80 { allASCII = false }
            position += 1
        }
        var text = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return Self.text(text[...], allASCII: false)
            case UInt8(ascii: "\\"): guard unescape(into: &text) else { return nil }
            case 0..<0x20: return nil
            default: text.append(byte)
            }
        }
        return nil
    }

    /// The text of a string's bytes; `nil` when they are not UTF-8. (ASCII needs no validation,
    /// which is most of what we read.)
    private static func text(_ bytes: ArraySlice<UInt8>, allASCII: Bool) -> String? {
        allASCII ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
    }

    /// The escape after a backslash, appended to `text` as UTF-8.
    private mutating func unescape(into text: inout [UInt8]) -> Bool {
        guard position < bytes.count else { return false }
        let escape = bytes[position]
        position += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
        case UInt8(ascii: "b"): text.append(0x08)
        case UInt8(ascii: "f"): text.append(0x0C)
        case UInt8(ascii: "n"): text.append(0x0A)
        case UInt8(ascii: "r"): text.append(0x0D)
        case UInt8(ascii: "t"): text.append(0x09)
        case UInt8(ascii: "u"):
            guard let scalar = unicodeEscape() else { return false }
            text.append(contentsOf: String(Character(scalar)).utf8)
        default: return false
        }
        return true
    }

    /// The scalar of `XXXX` after `\u` — with the low half of a surrogate pair when it is the high one.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let unit = hexQuad() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
            else { return nil }
            position += 2
            guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF: return nil
        default: return Unicode.Scalar(unit)
        }
    }

    private mutating func hexQuad() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        position += 4
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite as a `Double`.
    private mutating func number() -> JSONValue? {
        let start = position
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
            // No leading zeros: "01" is not a number.
        } else if digits() == 0 {
            return nil
        }
        if consume(UInt8(ascii: ".")), digits() == 0 { return nil }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            if digits() == 0 { return nil }
        }
        guard let number = Double(String(decoding: bytes[start..<position], as: UTF8.self)), number.isFinite else { return nil }
        return .number(number)
    }

    /// Steps over decimal digits; how many.
    private mutating func digits() -> Int {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
        return position - start
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
            word.withUTF8Buffer({ expected in bytes[position..<position + count].elementsEqual(expected) })
        else { return nil }
        position += count
        return value
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }
}
