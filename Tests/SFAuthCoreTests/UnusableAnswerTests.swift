import Testing

@testable import SFAuthCore

/// An answer the client cannot use says what helps by its remedy, a value — never by what its words
/// happen to contain.
@Suite struct UnusableAnswerTests {
    @Test func withoutARemedyTheServerMayBeFailing() {
        let error = OAuthError.invalidServerResponse("the token response has no access_token")
        #expect(
            error.description == "The server's answer could not be used: the token response has no access_token; "
                + "the server may be failing, try again later.")
        #expect(error.remedy == nil && error.recovery == .retryLater)
        // Words that happen to say "again" decide nothing.
        #expect(
            OAuthError.invalidServerResponse("the server answered again with nothing").description
                .hasSuffix("with nothing; the server may be failing, try again later."))
    }

    @Test func aRemedySaysWhatHelpsInTheProgramsOwnWords() {
        let busy = OAuthError.invalidServerResponse(
            Problem(
                "the token endpoint https://idp.example/token answered HTTP 503 (temporarily_unavailable)",
                remedy: .tryAgainLater))
        #expect(busy.remedy == .tryAgainLater)
        #expect(
            busy.description == "The server's answer could not be used: the token endpoint https://idp.example/token answered HTTP 503 "
                + "(temporarily_unavailable). Try again later.")
        #expect(
            busy.description(advising: { _ in "Run `acme login` in a minute." }).hasSuffix("(temporarily_unavailable). Run `acme login` in a minute.")
        )
        #expect(
            busy.summary == "The server's answer could not be used: the token endpoint https://idp.example/token answered HTTP 503 "
                + "(temporarily_unavailable)")
    }

    @Test func aMixUpIsRefusedForThisAttemptOnly() throws {
        let response = AuthorizationResponse(code: "c", state: "s", issuer: "https://evil.example")
        let server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
            issuer: "https://idp.example")
        let error = #expect(throws: OAuthError.self) { try response.checkIssuer(of: server) }
        #expect(error?.remedy == .tryAgain)
        #expect(error?.description.hasSuffix("it may come from another server, so it was refused. Try again.") == true)
    }
}
