import FoundationEssentials
import Testing

@testable import SFAuthModel

/// The hand-written JSON reader: RFC 8259's grammar, no more and no less.
struct JSONParserTests {
    @Test(
        arguments: [
            (
                #"{"a": [1, -2.5e3, true, false, null, "x"]}"#,
                JSONValue.object(["a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("x")])])
            ),
            (" \t\r\n[] \n", .array([])),
            ("{}", .object([:])),
            ("\u{FEFF}{}", .object([:])),
            (#""\"\\\/\b\f\n\r\t""#, .string("\"\\/\u{8}\u{C}\n\r\t")),
            (#""\u00e9\u20AC\ud83d\ude00""#, .string("é€😀")),
            ("\"é\"", .string("é")),
            (#"{"k": 1, "k": 2}"#, .object(["k": .number(2)])),
            ("0", .number(0)),
            ("-0.5E+2", .number(-50)),
            ("1e-400", .number(0)),
        ] as [(String, JSONValue)])
    func accepts(text: String, value: JSONValue) {
        #expect(JSONValue.parse(Array(text.utf8)) == value)
    }

    @Test(
        arguments: [
            "", " ", "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "{'a':1}", "01", "1.", ".5", "-", "+1",
            "1e", "1e+", "0x10", "NaN", "Infinity", "1e400", "tru", "nulll", "[1] 2", "\"a", "\"\u{1}\"", #""\x""#,
            #""\u12""#, #""\ud83d""#, #""\ude00""#, #""\ud83d\u0041""#, "[1 2]",
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ])
    func refuses(text: String) {
        #expect(JSONValue.parse(Array(text.utf8)) == nil)
    }

    @Test func refusesInvalidUTF8InStrings() {
        #expect(JSONValue.parse([UInt8(ascii: "\""), 0xC3, UInt8(ascii: "\"")]) == nil)
        #expect(JSONValue.parse([UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\"")]) == nil)
    }

    @Test func nestingUpToTheLimitIsAccepted() {
        let depth = JSONParser.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(JSONValue.parse(Array(text.utf8)) != nil)
    }

    @Test func agreesWithJSONDecoderOnEveryValueOfATable() throws {
        for text in [#"{"a": {"b": [1.25, "\u0000", {"c": null}]}, "d": -1e10}"#, "[\"\\ud800\\udc00\"]", "123456789012345678901234567890"] {
            let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(JSONValue.parse(Array(text.utf8)) == decoded, "\(text)")
        }
    }
}
