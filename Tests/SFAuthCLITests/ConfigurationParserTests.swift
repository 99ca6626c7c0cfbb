import SFAuth
import Testing

@testable import SFAuthCLI

/// The TOML subset of configuration files: what it reads, and the exact `FILE:LINE: message` for
/// everything it refuses.
@Suite struct ConfigurationParserTests {
    /// The message of the configuration error parsing `text` throws, or `nil` when it parses.
    func error(_ text: String) -> String? {
        do {
            _ = try ConfigurationParser.parse(text, path: "f.toml")
            return nil
        } catch {
            guard case .configuration(let message) = error else { return "unexpected \(error)" }
            return message.text
        }
    }

    @Test func readsEverythingTheSubsetHas() throws {
        let document = try ConfigurationParser.parse(
            """
            \u{FEFF}# a comment
            top = "level"   # trailing comment

            [profile.work]
            basic = "tab\\there \\"quoted\\" \\\\ \\u00e9\\U0001F600"
            literal = 'C:\\no\\escapes "here"'
            "quoted key" = 'x'
            count = -1_000
            plus = +7
            zero = 0
            on = true
            off = false
            list = [
              "a",   # first
              'b',

              "c",
            ]
            empty = []

            [ profile . "my work" . params ]
            prompt = "consent"
            """, path: "f.toml")
        #expect(document.root.entries == [.init(key: "top", value: .string("level"), line: 2)])
        #expect(document.tables.map(\.name) == [["profile", "work"], ["profile", "my work", "params"]])
        #expect(document.tables.map(\.line) == [4, 21])
        #expect(document.tables[1].displayName == "profile.\"my work\".params")
        let work = try #require(document.table(["profile", "work"]))
        #expect(work.entries.map(\.key) == ["basic", "literal", "quoted key", "count", "plus", "zero", "on", "off", "list", "empty"])
        #expect(work.entries.map(\.line) == [5, 6, 7, 8, 9, 10, 11, 12, 13, 19])
        #expect(
            work.entries.map(\.value) == [
                .string("tab\there \"quoted\" \\ é😀"), .string(#"C:\no\escapes "here""#), .string("x"), .integer(-1000), .integer(7),
                .integer(0), .boolean(true), .boolean(false), .strings(["a", "b", "c"]), .strings([]),
            ])
    }

    @Test func windowsLineEndingsAndNoFinalNewline() throws {
        let document = try ConfigurationParser.parse("a = 1\r\n# c\r\n[t]\r\nb = \"x\"", path: "f.toml")
        #expect(document.root.entries == [.init(key: "a", value: .integer(1), line: 1)])
        #expect(document.tables == [.init(name: ["t"], line: 3, entries: [.init(key: "b", value: .string("x"), line: 4)])])
    }

    @Test func emptyFileIsEmpty() throws {
        let document = try ConfigurationParser.parse("\n# nothing\n", path: "f.toml")
        #expect(document.root.entries.isEmpty && document.tables.isEmpty)
    }

    @Test(arguments: [
        ("a = \"x", #"f.toml:1: unterminated string (missing closing ")"#),
        ("a = 'x\nb = 1", "f.toml:1: unterminated string (missing closing ')"),
        ("\n\na = \"x\\q\"", #"f.toml:3: invalid escape '\q' in a string; use \\ for a backslash, or a 'literal string'"#),
        ("a = \"\\u12\"", #"f.toml:1: \u needs 4 hexadecimal digits"#),
        ("a = \"\\uD800\"", #"f.toml:1: \uD800 is not a Unicode scalar value"#),
        ("a = \"x\u{01}\"", #"f.toml:1: control character U+0001 in a string; write it as an escape such as \t or \u0007"#),
        ("a = 1\na = 2", "f.toml:2: duplicate key 'a' (first set on line 1)"),
        ("[t]\na = 1\nb = 2\n\"a\" = 3", "f.toml:4: duplicate key 'a' in [t] (first set on line 2)"),
        ("[t]\n[u]\n[t]", "f.toml:3: duplicate table [t] (first defined on line 1)"),
        ("[[t]]", "f.toml:1: arrays of tables ([[…]]) are not supported"),
        ("[t", "f.toml:1: expected ']' to close the table header, found the end of the file"),
        ("[]", "f.toml:1: expected a key (letters, digits, '_' and '-', or a quoted string), found ']'"),
        ("a.b = 1", "f.toml:1: dotted keys ('a.… = …') are not supported; use a [table] header"),
        ("= 1", "f.toml:1: expected a key before '='"),
        ("a 1", "f.toml:1: expected '=' after the key 'a', found '1'"),
        ("a =", "f.toml:1: a value is missing after '='"),
        ("a = # nothing", "f.toml:1: a value is missing after '='"),
        ("a = x", #"f.toml:1: unquoted value 'x'; strings need quotes: "x""#),
        ("a = https://x.example", #"f.toml:1: unquoted value 'https://x.example'; strings need quotes: "https://x.example""#),
        ("a = \"x\" b", "f.toml:1: unexpected 'b' after the value; write one 'key = value' per line"),
        ("a = 1\rb = 2", "f.toml:1: a carriage return without a line feed; save the file with Unix (LF) or Windows (CRLF) line ends"),
        ("a = \"\"\"x\"\"\"", #"f.toml:1: multi-line strings ("""…""") are not supported"#),
        ("a = '''x'''", "f.toml:1: multi-line strings ('''…''') are not supported"),
        ("a = {x = 1}", "f.toml:1: inline tables ({…}) are not supported; use a [table] header"),
        ("a = 1.5", "f.toml:1: floating-point numbers are not supported: '1.5'"),
        ("a = 1e3", "f.toml:1: floating-point numbers are not supported: '1e3'"),
        ("a = inf", "f.toml:1: floating-point numbers are not supported: 'inf'"),
        ("a = 0x1F", "f.toml:1: hexadecimal, octal and binary numbers are not supported; write '0x1F' in decimal"),
        ("a = 1979-05-27", "f.toml:1: dates and times are not supported; quote '1979-05-27' if it is meant as a string"),
        ("a = 007", "f.toml:1: leading zeros are not allowed in integers: '007'"),
        ("a = 1_", "f.toml:1: '1_' is not a number; quote it if it is meant as a string"),
        ("a = 99999999999999999999", "f.toml:1: the integer '99999999999999999999' is too large"),
        ("a = [1]", "f.toml:1: arrays may hold only strings"),
        ("a = [\n  \"x\",\n  true,\n]", "f.toml:3: arrays may hold only strings"),
        ("a = [[\"x\"]]", "f.toml:1: arrays may hold only strings"),
        ("a = [\n  \"x\",\n", "f.toml:1: unterminated array (missing ']')"),
        ("a = [\"x\" \"y\"]", "f.toml:1: expected ',' or ']' in the array, found '\"'"),
        ("# bell \u{07}", "f.toml:1: control character U+0007 in a comment"),
    ])
    func refusesWithFileLineAndReason(text: String, message: String) {
        #expect(error(text) == message)
    }
}
