/// The text of a Docker `config.json`, edited in place: `credHelpers` entries are set or removed
/// by splicing the bytes, so every other key, value, layout and byte of the file stays as it was
/// (a decode and re-encode would reorder keys, reformat numbers and drop what it does not know).
///
/// The whole text is checked as JSON (RFC 8259) first, and its top level must be an object; an
/// empty file counts as `{}` (`docker` itself starts from an empty file). Of a key given twice,
/// the last counts, as Go's `encoding/json` reads it.
package struct DockerConfigText: Equatable, Sendable {
    /// The file's bytes.
    package private(set) var bytes: [UInt8]

    /// The key clients read registry helpers from.
    package static let credHelpersKey = "credHelpers"

    /// Why a text cannot be edited.
    package enum Invalid: Error, Equatable, CustomStringConvertible {
        /// Not JSON: what is wrong, and the byte offset.
        case notJSON(String, offset: Int)
        /// JSON, but the top level is not an object.
        case notAnObject
        /// `credHelpers` is there, but not an object.
        case credHelpersNotAnObject

        package var description: String {
            switch self {
            case .notJSON(let reason, let offset): "it is not valid JSON (\(reason) at byte \(offset))"
            case .notAnObject: "it is not a JSON object"
            case .credHelpersNotAnObject: "its \"credHelpers\" is not a JSON object"
            }
        }
    }

    /// `{}`: the text of a file that does not exist yet.
    package static var empty: DockerConfigText { DockerConfigText(checked: Array("{}".utf8)) }

    private init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Checks `bytes`.
    ///
    /// - Throws: `Invalid` when they are not JSON, the top level is not an object, or
    ///   `credHelpers` is there but not an object.
    package init(_ bytes: [UInt8]) throws(Invalid) {
        self.bytes = bytes.allSatisfy(Self.isWhitespace) ? Array("{}".utf8) : bytes
        let top = try topLevel()
        if let helpers = top.members.last(where: { $0.key == Self.credHelpersKey }), helpers.kind != .object {
            throw .credHelpersNotAnObject
        }
    }

    /// The helper `credHelpers` names for `key`, when it is a string.
    package func helper(for key: String) -> String? {
        guard let helpers = try? credHelpers(), let member = helpers.members.last(where: { $0.key == key }), member.kind == .string else {
            return nil
        }
        var scanner = Scanner(bytes)
        scanner.index = member.valueStart
        return try? scanner.string()
    }

    /// Makes `credHelpers[key]` the string `helper` — replacing what it was, adding the entry, or
    /// adding `credHelpers` itself at the end of the top-level object.
    package mutating func setHelper(_ helper: String, for key: String) {
        let value = Array(ExecCredential.jsonString(helper).utf8)
        // The text was checked at init and every edit keeps it valid: these parse.
        guard let top = try? topLevel() else { return }
        guard let object = try? credHelpers() else {
            let indent = Self.indent(of: top, in: bytes)
            let inner = indent.contains(0x0A) ? indent + Self.indentUnit(indent) : []
            let close = indent.contains(0x0A) ? indent : []
            let member = Array(ExecCredential.jsonString(key).utf8) + Array(": ".utf8) + value
            insert(
                Array(ExecCredential.jsonString(Self.credHelpersKey).utf8) + Array(": {".utf8) + inner + member + close + [UInt8(ascii: "}")],
                into: top)
            return
        }
        let existing = object.members.filter { $0.key == key }
        if existing.isEmpty {
            insert(Array(ExecCredential.jsonString(key).utf8) + Array(": ".utf8) + value, into: object)
        } else {
            for member in existing.reversed() { bytes.replaceSubrange(member.valueStart..<member.valueEnd, with: value) }
        }
    }

    /// Removes `credHelpers[key]` (every entry of that key) when it names `helper`; whether it did.
    /// Another helper's entry, and the rest of `credHelpers`, stay.
    @discardableResult
    package mutating func removeHelper(_ helper: String, for key: String) -> Bool {
        guard self.helper(for: key) == helper else { return false }
        while let object = try? credHelpers(), let index = object.members.firstIndex(where: { $0.key == key }) {
            let members = object.members
            let range: Range<Int>
            if index > 0 {
                range = members[index - 1].valueEnd..<members[index].valueEnd  // the comma before it, and it
            } else if members.count > 1 {
                range = members[0].keyStart..<members[1].keyStart  // it, its comma, up to the next key
            } else {
                range = (object.open + 1)..<object.close  // the only one: an empty object
            }
            bytes.removeSubrange(range)
        }
        return true
    }

    // MARK: - Structure

    /// An object's braces and members, as byte offsets.
    struct ObjectSpan {
        var open: Int
        var close: Int
        var members: [Member]
    }

    /// A member: its key (decoded), where its key starts, and its value's span and kind.
    struct Member {
        var key: String
        var keyStart: Int
        var valueStart: Int
        var valueEnd: Int
        var kind: Kind
    }

    enum Kind { case object, array, string, number, literal }

    private func topLevel() throws(Invalid) -> ObjectSpan {
        var scanner = Scanner(bytes)
        scanner.skipWhitespace()
        guard scanner.peek == UInt8(ascii: "{") else {
            _ = try scanner.value(depth: 0)  // not JSON at all, or another kind of value
            throw .notAnObject
        }
        let top = try scanner.object(depth: 0)
        scanner.skipWhitespace()
        guard scanner.index == bytes.count else { throw .notJSON("text after the object", offset: scanner.index) }
        return top
    }

    private func credHelpers() throws(Invalid) -> ObjectSpan? {
        guard let member = try topLevel().members.last(where: { $0.key == Self.credHelpersKey }), member.kind == .object else { return nil }
        var scanner = Scanner(bytes)
        scanner.index = member.valueStart
        return try scanner.object(depth: 1)
    }

    /// Adds `member` as the last member of `object`, laid out as its last member is.
    private mutating func insert(_ member: [UInt8], into object: ObjectSpan) {
        guard let last = object.members.last else {
            bytes.insert(contentsOf: member, at: object.open + 1)
            return
        }
        bytes.insert(contentsOf: [UInt8(ascii: ",")] + Self.indent(of: object, in: bytes) + member, at: last.valueEnd)
    }

    /// The whitespace before the object's last key (`"\n\t"` in Docker's own layout); none when the
    /// object is empty.
    private static func indent(of object: ObjectSpan, in bytes: [UInt8]) -> [UInt8] {
        guard let last = object.members.last else { return [] }
        var start = last.keyStart
        while start > object.open + 1, isWhitespace(bytes[start - 1]) { start -= 1 }
        return Array(bytes[start..<last.keyStart])
    }

    /// One level of indentation: what follows the last line break of `indent` (a tab, or spaces).
    private static func indentUnit(_ indent: [UInt8]) -> [UInt8] {
        guard let newline = indent.lastIndex(of: 0x0A) else { return [] }
        let unit = Array(indent[(newline + 1)...])
        return unit.isEmpty ? Array("  ".utf8) : unit
    }

    fileprivate static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    // MARK: - Scanner

    /// A checking reader of JSON text (RFC 8259 §2–7), recording the members of the objects asked for.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0
        /// Deeper than this is refused rather than risking the stack.
        static let maximumDepth = 256

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, DockerConfigText.isWhitespace(byte) { index += 1 }
        }

        private func failure(_ reason: String) -> Invalid { .notJSON(reason, offset: index) }

        private mutating func expect(_ byte: UInt8, _ reason: String) throws(Invalid) {
            guard peek == byte else { throw failure(reason) }
            index += 1
        }

        /// Reads one value; returns its kind.
        mutating func value(depth: Int) throws(Invalid) -> Kind {
            skipWhitespace()
            guard let byte = peek else { throw failure("a value is missing") }
            switch byte {
            case UInt8(ascii: "{"):
                _ = try object(depth: depth + 1)
                return .object
            case UInt8(ascii: "["):
                try array(depth: depth + 1)
                return .array
            case UInt8(ascii: "\""):
                _ = try string()
                return .string
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try number()
                return .number
            default:
                for word in ["true", "false", "null"] where bytes[index...].starts(with: word.utf8) {
                    index += word.utf8.count
                    return .literal
                }
                throw failure("unexpected character")
            }
        }

        /// Reads an object starting at `{`.
        mutating func object(depth: Int) throws(Invalid) -> ObjectSpan {
            guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
            skipWhitespace()
            let open = index
            try expect(UInt8(ascii: "{"), "an object is expected")
            var members = [Member]()
            skipWhitespace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return ObjectSpan(open: open, close: index - 1, members: members)
            }
            while true {
                skipWhitespace()
                let keyStart = index
                guard peek == UInt8(ascii: "\"") else { throw failure("a key is expected") }
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' is expected")
                skipWhitespace()
                let valueStart = index
                let kind = try value(depth: depth)
                members.append(Member(key: key, keyStart: keyStart, valueStart: valueStart, valueEnd: index, kind: kind))
                skipWhitespace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}' is expected")
                return ObjectSpan(open: open, close: index - 1, members: members)
            }
        }

        private mutating func array(depth: Int) throws(Invalid) {
            guard depth <= Self.maximumDepth else { throw failure("nested too deeply") }
            try expect(UInt8(ascii: "["), "an array is expected")
            skipWhitespace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                _ = try value(depth: depth)
                skipWhitespace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']' is expected")
                return
            }
        }

        /// Reads a string starting at `"`; returns it decoded (invalid UTF-8 and lone surrogates
        /// become U+FFFD, as Go reads them).
        mutating func string() throws(Invalid) -> String {
            try expect(UInt8(ascii: "\""), "a string is expected")
            var scalars = String.UnicodeScalarView()
            var run = [UInt8]()
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll()
            }
            while true {
                guard let byte = peek else { throw failure("a string is not closed") }
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush()
                    guard let escaped = peek else { throw failure("a string is not closed") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code), bytes[index...].starts(with: "\\u".utf8) {
                            let saved = index
                            index += 2
                            let low = try hex4()
                            if (0xDC00..<0xE000).contains(low) {
                                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                index = saved
                            }
                        }
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default:
                        throw failure("an unknown escape in a string")
                    }
                case 0..<0x20:
                    throw failure("a control character in a string")
                default:
                    run.append(byte)
                }
            }
        }

        private mutating func hex4() throws(Invalid) -> UInt32 {
            guard index + 4 <= bytes.count else { throw failure("a \\u escape is cut short") }
            var code: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw failure("a \\u escape is not hexadecimal")
                }
                code = code << 4 | UInt32(digit)
            }
            index += 4
            return code
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        private mutating func number() throws(Invalid) {
            func digits() -> Int {
                let start = index
                while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
                return index - start
            }
            if peek == UInt8(ascii: "-") { index += 1 }
            if peek == UInt8(ascii: "0") {
                index += 1
            } else if digits() == 0 {
                throw failure("a number is malformed")
            }
            if peek == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw failure("a number is malformed") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw failure("a number is malformed") }
            }
        }
    }
}
