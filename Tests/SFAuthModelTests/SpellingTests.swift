import SFAuthModel
import Testing

@Suite struct SpellingTests {
    @Test(arguments: [
        ("logn", "login"), ("tokn", "token"), ("LOGIN", "login"), ("clientid", "client_id"), ("isuer", "issuer"),
        ("whoam", "whoami"), ("acounts", "accounts"),
    ])
    func aNearNameIsSuggested(typed: String, meant: String) {
        let names = ["login", "token", "accounts", "whoami", "client_id", "issuer", "use", "config"]
        #expect(Spelling.suggestion(for: typed, among: names) == meant)
    }

    @Test func farOrAmbiguousNamesSuggestNothing() {
        #expect(Spelling.suggestion(for: "nosuch", among: ["login", "token"]) == nil)
        #expect(Spelling.suggestion(for: "us", among: ["use"]) == nil)  // short names: only a difference of case
        #expect(Spelling.suggestion(for: "abcd", among: ["abce", "abcf"]) == nil)  // two equally near
    }

    @Test func nearnessIsTheSameRuleForAccountNames() {
        #expect(Spelling.isNear("main", "mian") && Spelling.isNear("Main", "main"))
        #expect(!Spelling.isNear("use", "us") && !Spelling.isNear("production", "staging"))
    }
}
