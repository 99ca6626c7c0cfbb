/// `application/x-www-form-urlencoded` encoding and decoding, written against the bytes so that
/// it behaves the same everywhere (RFC 6749 Appendix B; WHATWG URL "urlencoded").
package enum FormURLEncoding {
    /// Percent-encodes everything but RFC 3986 unreserved characters (`A–Z a–z 0–9 - . _ ~`).
    /// A space becomes `%20`, which every form decoder accepts.
    package static func encode(_ string: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes name/value pairs in the given order: `a=1&b=2`.
    package static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }

    /// Decodes a form-encoded component: `+` is a space and `%XX` a byte. Returns `nil` when a
    /// percent sign is not followed by two hex digits or the bytes are not valid UTF-8.
    package static func decode(_ component: Substring) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(component.utf8.count)
        var bytes = component.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "+"):
                out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(high << 4 | low)
            default:
                out.append(byte)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// Parses `a=1&b=2` into ordered pairs. Empty segments are skipped; a segment without `=` has an
    /// empty value. Returns `nil` when any component is badly encoded.
    package static func parse(_ query: Substring) -> [(name: String, value: String)]? {
        var pairs = [(name: String, value: String)]()
        for segment in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { return nil }
            guard let value = parts.count > 1 ? decode(parts[1]) : "" else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
