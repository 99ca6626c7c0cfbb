import CredentialProtocols
import Foundation
import Testing

/// Docker's config.json edited as text: `credHelpers` entries set and removed, every other byte kept.
struct DockerConfigTextTests {
    /// Docker's own layout (`json.MarshalIndent` with a tab).
    static let dockers = """
        {
        \t"auths": {
        \t\t"registry.example": {
        \t\t\t"auth": "dXNlcjpwYXNz"
        \t\t}
        \t},
        \t"psFormat": "table {{.ID}}",
        \t"big": 12345678901234567890.50e+3
        }
        """

    func text(_ string: String) throws -> DockerConfigText { try DockerConfigText(Array(string.utf8)) }
    func string(_ text: DockerConfigText) -> String { String(decoding: text.bytes, as: UTF8.self) }

    @Test func credHelpersIsAddedLaidOutAsTheFileIsAndNothingElseChanges() throws {
        var config = try text(Self.dockers)
        config.setHelper("sfauth", for: "127.0.0.1:5055")
        #expect(
            string(config) == """
                {
                \t"auths": {
                \t\t"registry.example": {
                \t\t\t"auth": "dXNlcjpwYXNz"
                \t\t}
                \t},
                \t"psFormat": "table {{.ID}}",
                \t"big": 12345678901234567890.50e+3,
                \t"credHelpers": {
                \t\t"127.0.0.1:5055": "sfauth"
                \t}
                }
                """)
        config.setHelper("sfauth", for: "registry.example")
        #expect(string(config).contains("\t\t\"127.0.0.1:5055\": \"sfauth\",\n\t\t\"registry.example\": \"sfauth\"\n\t}"))
        #expect(config.helper(for: "registry.example") == "sfauth")
        // Removing both leaves an empty credHelpers and the rest exactly as it was.
        let removed1 = config.removeHelper("sfauth", for: "127.0.0.1:5055")
        #expect(removed1)
        let removed2 = config.removeHelper("sfauth", for: "registry.example")
        #expect(removed2)
        #expect(
            string(config)
                == Self.dockers.replacingOccurrences(of: "12345678901234567890.50e+3", with: "12345678901234567890.50e+3,\n\t\"credHelpers\": {}"))
    }

    @Test func anExistingEntryIsReplacedInPlace() throws {
        var config = try text(#"{"credHelpers":{"a.example":"gcloud","r.example" : "ecr-login"},"x":[1,2]}"#)
        #expect(config.helper(for: "r.example") == "ecr-login")
        config.setHelper("sfauth", for: "r.example")
        #expect(string(config) == #"{"credHelpers":{"a.example":"gcloud","r.example" : "sfauth"},"x":[1,2]}"#)
        config.setHelper("sfauth", for: "new.example")
        #expect(string(config) == #"{"credHelpers":{"a.example":"gcloud","r.example" : "sfauth","new.example": "sfauth"},"x":[1,2]}"#)
    }

    @Test func onlySfauthsEntryIsRemoved() throws {
        var config = try text(#"{"credHelpers": {"a.example": "gcloud", "r.example": "sfauth", "z.example": "sfauth"}}"#)
        let removed3 = config.removeHelper("sfauth", for: "a.example")
        #expect(!removed3)
        let removed4 = config.removeHelper("sfauth", for: "missing.example")
        #expect(!removed4)
        let removed5 = config.removeHelper("sfauth", for: "r.example")
        #expect(removed5)
        #expect(string(config) == #"{"credHelpers": {"a.example": "gcloud", "z.example": "sfauth"}}"#)
        var first = try text(#"{"credHelpers": {"r.example": "sfauth", "a.example": "gcloud"}}"#)
        let removed6 = first.removeHelper("sfauth", for: "r.example")
        #expect(removed6)
        #expect(string(first) == #"{"credHelpers": {"a.example": "gcloud"}}"#)
    }

    @Test func keysAreComparedDecodedAndTheLastOfTwoCounts() throws {
        var config = try text(#"{"credHelpers": {"127.0.0.1\u003a5055": "x", "127.0.0.1:5055": "sfauth"}}"#)
        #expect(config.helper(for: "127.0.0.1:5055") == "sfauth")
        let removed7 = config.removeHelper("sfauth", for: "127.0.0.1:5055")
        #expect(removed7)
        #expect(string(config) == #"{"credHelpers": {}}"#)
    }

    @Test func anEmptyFileAndAnEmptyObjectGetCredHelpers() throws {
        for empty in ["", " \n", "{}", "{ }"] {
            var config = try text(empty)
            config.setHelper("sfauth", for: "r.example")
            #expect(try JSONSerialization.jsonObject(with: Data(config.bytes)) as? NSDictionary == ["credHelpers": ["r.example": "sfauth"]])
        }
        var empty = DockerConfigText.empty
        empty.setHelper("sfauth", for: "r.example")
        #expect(string(empty) == #"{"credHelpers": {"r.example": "sfauth"}}"#)
    }

    @Test(arguments: [
        "{", "{\"a\":}", "{\"a\":1,}", "[1]", "\"text\"", "{} {}", "{\"a\":01}", "{\"a\":\"\u{1}\"}", "{\"a\":tru}",
        "{\"a\":\"\\x\"}", "{'a':1}", "\u{FEFF}{}", "{\"credHelpers\": null}", "{\"credHelpers\": [\"r.example\"]}",
        String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    ])
    func whatIsNotAJSONObjectIsRefused(bad: String) {
        #expect(throws: DockerConfigText.Invalid.self) { try DockerConfigText(Array(bad.utf8)) }
    }

    @Test func everyValidValueIsAccepted() throws {
        let config = try text(#"{"a": [true, false, null, -0.5e-3, 0, "\u00e9\ud83d\ude00\n"], "b": {"c": {}}, "credHelpers": {}}"#)
        #expect(config.helper(for: "c") == nil)
    }
}
