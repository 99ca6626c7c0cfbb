import SFAuth

/// Reads the small subset of TOML 1.0 that sfauth's configuration files use, and says exactly where
/// anything else is: `FILE:LINE: what is wrong`.
///
/// Supported: `#` comments; `key = value`; `[table]` and `[dotted.table]` headers; bare and quoted
/// keys; basic strings with escapes and literal strings; decimal integers; `true`/`false`; arrays of
/// strings (across lines, with comments and a trailing comma). Everything else TOML has — multi-line
/// strings, floats, dates, inline tables, arrays of tables, dotted keys — is refused by name rather
/// than misread. Our own parser, not a dependency: it is a few hundred lines, and sfauth's start-up
/// time and size matter.
package struct ConfigurationParser {
    private let path: String
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1

    private init(text: String, path: String) {
        self.path = path
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }  // a byte order mark some editors write
        self.scalars = scalars
    }

    /// Parses `text`, the contents of the file at `path`.
    ///
    /// - Throws: `OAuthError.configuration("PATH:LINE: …")` for the first thing that is not in the subset.
    package static func parse(_ text: String, path: String) throws(OAuthError) -> ConfigurationDocument {
        var parser = ConfigurationParser(text: text, path: path)
        return try parser.document()
    }

    /// Whether a character may appear in a bare key: `A-Z a-z 0-9 _ -`.
    package static func isBareKeyCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9", "_", "-": return true
        default: return false
        }
    }

    // MARK: - Document, tables, entries

    private mutating func document() throws(OAuthError) -> ConfigurationDocument {
        var root = ConfigurationDocument.Table(name: [], line: 0, entries: [])
        var tables = [ConfigurationDocument.Table]()
        var tableLines = [[String]: Int]()
        var keyLines = [String: Int]()  // keys of the current table
        while true {
            skipSpaces()
            guard let scalar = peek() else { break }
            switch scalar {
            case "#", "\n", "\r":
                try endOfLine()
            case "[":
                let table = try tableHeader()
                if let first = tableLines[table.name] {
                    throw failure("duplicate table [\(table.displayName)] (first defined on line \(first))", line: table.line)
                }
                tableLines[table.name] = table.line
                tables.append(table)
                keyLines = [:]
                try endOfLine()
            default:
                let entry = try keyValue()
                if let first = keyLines[entry.key] {
                    let table = tables.last.map { " in [\($0.displayName)]" } ?? ""
                    throw failure("duplicate key '\(entry.key)'\(table) (first set on line \(first))", line: entry.line)
                }
                keyLines[entry.key] = entry.line
                if tables.isEmpty { root.entries.append(entry) } else { tables[tables.count - 1].entries.append(entry) }
                try endOfLine()
            }
        }
        return ConfigurationDocument(path: path, root: root, tables: tables)
    }

    private mutating func tableHeader() throws(OAuthError) -> ConfigurationDocument.Table {
        let headerLine = line
        advance()  // [
        if peek() == "[" { throw failure("arrays of tables ([[…]]) are not supported") }
        var name = [String]()
        while true {
            skipSpaces()
            name.append(try key())
            skipSpaces()
            if peek() == "." {
                advance()
                continue
            }
            if peek() == "]" {
                advance()
                break
            }
            throw failure("expected ']' to close the table header, found \(describeNext())")
        }
        return ConfigurationDocument.Table(name: name, line: headerLine, entries: [])
    }

    private mutating func keyValue() throws(OAuthError) -> ConfigurationDocument.Entry {
        let entryLine = line
        if peek() == "=" { throw failure("expected a key before '='") }
        let key = try key()
        skipSpaces()
        if peek() == "." {
            throw failure("dotted keys ('\(key).… = …') are not supported; use a [table] header")
        }
        guard peek() == "=" else { throw failure("expected '=' after the key '\(key)', found \(describeNext())") }
        advance()
        skipSpaces()
        return ConfigurationDocument.Entry(key: key, value: try value(), line: entryLine)
    }

    /// A bare key or a quoted one.
    private mutating func key() throws(OAuthError) -> String {
        switch peek() {
        case "\"": return try basicString()
        case "'": return try literalString()
        case let scalar? where Self.isBareKeyCharacter(scalar):
            var key = ""
            while let next = peek(), Self.isBareKeyCharacter(next) {
                key.unicodeScalars.append(next)
                advance()
            }
            return key
        default:
            throw failure("expected a key (letters, digits, '_' and '-', or a quoted string), found \(describeNext())")
        }
    }

    /// After an entry or header: spaces, then a comment, a line break or the end of the file.
    private mutating func endOfLine() throws(OAuthError) {
        skipSpaces()
        if peek() == "#" { try comment() }
        switch peek() {
        case nil: return
        case "\n": advance()
        case "\r" where peek(offset: 1) == "\n":
            advance()
            advance()
        case "\r": throw failure("a carriage return without a line feed; save the file with Unix (LF) or Windows (CRLF) line ends")
        default: throw failure("unexpected \(describeNext()) after the value; write one 'key = value' per line")
        }
    }

    private mutating func comment() throws(OAuthError) {
        while let scalar = peek(), scalar != "\n" {
            if scalar == "\r" && peek(offset: 1) == "\n" { return }
            if Self.isForbiddenControl(scalar) { throw failure("control character \(Self.codePoint(scalar)) in a comment") }
            advance()
        }
    }

    // MARK: - Values

    private mutating func value() throws(OAuthError) -> ConfigurationValue {
        switch peek() {
        case "\"":
            if peek(offset: 1) == "\"" && peek(offset: 2) == "\"" { throw failure("multi-line strings (\"\"\"…\"\"\") are not supported") }
            return .string(try basicString())
        case "'":
            if peek(offset: 1) == "'" && peek(offset: 2) == "'" { throw failure("multi-line strings ('''…''') are not supported") }
            return .string(try literalString())
        case "[":
            return .strings(try array())
        case "{":
            throw failure("inline tables ({…}) are not supported; use a [table] header")
        case nil, "\n", "\r", "#":
            throw failure("a value is missing after '='")
        case let scalar?:
            if scalar == "+" || scalar == "-" || ("0"..."9").contains(scalar) { return try number() }
            return try word()
        }
    }

    private mutating func basicString() throws(OAuthError) -> String {
        let startLine = line
        advance()  // "
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek(), scalar != "\n" else { throw failure("unterminated string (missing closing \")", line: startLine) }
            advance()
            switch scalar {
            case "\"":
                return String(text)
            case "\\":
                text.append(try escape())
            default:
                if Self.isForbiddenControl(scalar) || scalar == "\r" {
                    throw failure("control character \(Self.codePoint(scalar)) in a string; write it as an escape such as \\t or \\u0007")
                }
                text.append(scalar)
            }
        }
    }

    /// The character after a backslash in a basic string.
    private mutating func escape() throws(OAuthError) -> Unicode.Scalar {
        guard let scalar = peek(), scalar != "\n" else { throw failure("unterminated string (missing closing \")") }
        advance()
        switch scalar {
        case "b": return "\u{08}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{0C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u", "U":
            let digits = scalar == "u" ? 4 : 8
            var hex = ""
            for _ in 0..<digits {
                guard let digit = peek(), digit.properties.isASCIIHexDigit else {
                    throw failure("\\\(scalar) needs \(digits) hexadecimal digits")
                }
                hex.unicodeScalars.append(digit)
                advance()
            }
            guard let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else {
                throw failure("\\\(scalar)\(hex) is not a Unicode scalar value")
            }
            return decoded
        default:
            throw failure("invalid escape '\\\(scalar)' in a string; use \\\\ for a backslash, or a 'literal string'")
        }
    }

    private mutating func literalString() throws(OAuthError) -> String {
        let startLine = line
        advance()  // '
        var text = String.UnicodeScalarView()
        while true {
            guard let scalar = peek(), scalar != "\n" else { throw failure("unterminated string (missing closing ')", line: startLine) }
            advance()
            if scalar == "'" { return String(text) }
            if Self.isForbiddenControl(scalar) || scalar == "\r" { throw failure("control character \(Self.codePoint(scalar)) in a string") }
            text.append(scalar)
        }
    }

    /// `[ "a", "b", ]`, possibly across lines with comments.
    private mutating func array() throws(OAuthError) -> [String] {
        let startLine = line
        advance()  // [
        var strings = [String]()
        while true {
            try skipSpacesLineBreaksAndComments()
            guard let scalar = peek() else { throw failure("unterminated array (missing ']')", line: startLine) }
            if scalar == "]" {
                advance()
                return strings
            }
            let elementLine = line
            // Checked before reading the element: nested arrays must not recurse (thousands of '['
            // would overflow the stack; found by fuzzing).
            guard scalar != "[", case .string(let string) = try value() else {
                throw failure("arrays may hold only strings", line: elementLine)
            }
            strings.append(string)
            try skipSpacesLineBreaksAndComments()
            switch peek() {
            case ",": advance()
            case "]":
                advance()
                return strings
            case nil: throw failure("unterminated array (missing ']')", line: startLine)
            default: throw failure("expected ',' or ']' in the array, found \(describeNext())")
            }
        }
    }

    /// A decimal integer; floats, dates and other radixes are named and refused.
    private mutating func number() throws(OAuthError) -> ConfigurationValue {
        var text = ""
        while let scalar = peek(), Self.isBareKeyCharacter(scalar) || "+.:".unicodeScalars.contains(scalar) {
            text.unicodeScalars.append(scalar)
            advance()
        }
        let unsigned = text.hasPrefix("+") || text.hasPrefix("-") ? String(text.dropFirst()) : text
        if unsigned.hasPrefix("0x") || unsigned.hasPrefix("0o") || unsigned.hasPrefix("0b") {
            throw failure("hexadecimal, octal and binary numbers are not supported; write '\(text)' in decimal")
        }
        if text.contains(":") || (unsigned.contains("-") && unsigned.first?.isNumber == true) {
            throw failure("dates and times are not supported; quote '\(text)' if it is meant as a string")
        }
        if unsigned == "inf" || unsigned == "nan" || unsigned.contains(".") || unsigned.contains("e") || unsigned.contains("E") {
            throw failure("floating-point numbers are not supported: '\(text)'")
        }
        let digits = unsigned.replacingUnderscoresBetweenDigits()
        guard let digits, !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else {
            throw failure("'\(text)' is not a number; quote it if it is meant as a string")
        }
        if digits.count > 1 && digits.hasPrefix("0") { throw failure("leading zeros are not allowed in integers: '\(text)'") }
        guard let magnitude = Int(digits) else { throw failure("the integer '\(text)' is too large") }
        return .integer(text.hasPrefix("-") ? -magnitude : magnitude)
    }

    /// `true` or `false`; any other bare word is a string someone forgot to quote.
    private mutating func word() throws(OAuthError) -> ConfigurationValue {
        var text = ""
        while let scalar = peek(), !" \t\r\n#,]".unicodeScalars.contains(scalar) {
            text.unicodeScalars.append(scalar)
            advance()
        }
        switch text {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "inf", "nan": throw failure("floating-point numbers are not supported: '\(text)'")
        case "": throw failure("expected a value after '=', found \(describeNext())")
        default: throw failure("unquoted value '\(text)'; strings need quotes: \"\(text)\"")
        }
    }

    // MARK: - Characters

    private func peek(offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func advance() {
        if scalars[index] == "\n" { line += 1 }
        index += 1
    }

    private mutating func skipSpaces() {
        while let scalar = peek(), scalar == " " || scalar == "\t" { advance() }
    }

    private mutating func skipSpacesLineBreaksAndComments() throws(OAuthError) {
        while let scalar = peek() {
            switch scalar {
            case " ", "\t", "\n": advance()
            case "\r" where peek(offset: 1) == "\n": advance()
            case "#": try comment()
            default: return
            }
        }
    }

    /// What comes next, for messages: `'x'`, `a line break` or `the end of the file`.
    private func describeNext() -> String {
        switch peek() {
        case nil: return "the end of the file"
        case "\n", "\r": return "a line break"
        case let scalar?: return Self.isForbiddenControl(scalar) ? Self.codePoint(scalar) : "'\(scalar)'"
        }
    }

    /// Control characters TOML forbids outside escapes: U+0000–U+001F except tab, and U+007F.
    private static func isForbiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r") || scalar.value == 0x7F
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private func failure(_ message: String, line: Int? = nil) -> OAuthError {
        .configuration("\(path):\(line ?? self.line): \(message)")
    }
}

private extension String {
    /// The digits with TOML's digit separators removed (`1_000` → `1000`); `nil` when an underscore is
    /// not between two digits.
    func replacingUnderscoresBetweenDigits() -> String? {
        let characters = Array(self)
        var digits = ""
        for (offset, character) in characters.enumerated() {
            if character == "_" {
                guard offset > 0, offset < characters.count - 1, characters[offset - 1].isNumber, characters[offset + 1].isNumber else { return nil }
                continue
            }
            digits.append(character)
        }
        return digits
    }
}

/// A configuration file as written, before its keys mean anything: tables of `key = value` entries,
/// each with its line, as read by `ConfigurationParser` (a small subset of TOML 1.0).
package struct ConfigurationDocument: Sendable, Equatable {
    /// The file's path, as given (used in every message about it).
    package var path: String
    /// The top-level entries (before any table header), as a table with an empty name.
    package var root: Table
    /// The `[tables]` in the order they appear.
    package var tables: [Table]

    /// One `[table]` and its entries.
    package struct Table: Sendable, Equatable {
        /// The dotted name split into keys: `[profile.work]` is `["profile", "work"]`; `[]` for the top level.
        package var name: [String]
        /// The line of the table header; 0 for the top level.
        package var line: Int
        /// The `key = value` entries in order.
        package var entries: [Entry]

        /// The name as written in messages: `profile.work`, with keys quoted where a bare key could not
        /// spell them (`profile."my work"`).
        package var displayName: String {
            name.map { key in
                key.unicodeScalars.allSatisfy(ConfigurationParser.isBareKeyCharacter) && !key.isEmpty ? key : "\"\(key)\""
            }.joined(separator: ".")
        }
    }

    /// One `key = value` line.
    package struct Entry: Sendable, Equatable {
        /// The key.
        package var key: String
        /// The value.
        package var value: ConfigurationValue
        /// The line the entry starts on (1-based).
        package var line: Int
    }

    /// The table named `name`, if the document has one.
    package func table(_ name: [String]) -> Table? {
        name.isEmpty ? root : tables.first { $0.name == name }
    }
}

/// A value in a configuration file: the TOML types sfauth accepts.
package enum ConfigurationValue: Sendable, Equatable {
    /// A basic (`"…"`) or literal (`'…'`) string.
    case string(String)
    /// A decimal integer.
    case integer(Int)
    /// `true` or `false`.
    case boolean(Bool)
    /// An array of strings.
    case strings([String])

    /// The type as said in messages: "a string", "an integer", "a boolean", "an array".
    package var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .boolean: return "a boolean"
        case .strings: return "an array"
        }
    }
}
