import FoundationEssentials

/// Any JSON value. Used to read server responses liberally (numbers as strings, unknown fields kept).
package enum JSONValue: Sendable, Equatable, Codable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// Parses a JSON document; `nil` when the bytes are not JSON (`JSONParser` says what is).
    package static func parse(_ bytes: [UInt8]) -> JSONValue? {
        JSONParser.parse(bytes)
    }

    /// The value of a member of an object.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// A string, or a number written as a string (integral numbers without `.0`).
    package var stringValue: String? {
        switch self {
        case .string(let value): return value
        case .number(let value) where value == value.rounded() && abs(value) < 1e15: return String(Int64(value))
        case .number(let value): return String(value)
        default: return nil
        }
    }

    /// A finite number, or a string holding one (`"3600"`, `"3600.0"`). `nil` for anything else,
    /// including `"nan"`, `"inf"` and numbers too large for a `Double` (`"1e400"`): numbers from a
    /// server are data, and no caller has a use for one that is not finite.
    package var numberValue: Double? {
        let number: Double?
        switch self {
        case .number(let value): number = value
        case .string(let value): number = Double(String(value.drop(while: \.isBlank).reversed().drop(while: \.isBlank).reversed()))
        default: number = nil
        }
        guard let number, number.isFinite else { return nil }
        return number
    }
}

extension Character {
    /// A space or a tab: what a number written as a string may be padded with.
    fileprivate var isBlank: Bool { self == " " || self == "\t" }
}
