import Testing

@testable import SFAuthCore

@Suite struct CallbackOutcomeTests {
    let state = "Qn8x_state-VALUE"

    @Test func codeIsPercentDecoded() {
        let outcome = CallbackOutcome(query: "code=aPrx%3D%3D&state=\(state)", expectedState: state)
        #expect(outcome == .authorized(AuthorizationResponse(code: "aPrx==", state: state)))
    }

    @Test func issuerIsKept() {
        let outcome = CallbackOutcome(query: "code=c&state=\(state)&iss=https%3A%2F%2Fidp.example", expectedState: state)
        #expect(outcome == .authorized(AuthorizationResponse(code: "c", state: state, issuer: "https://idp.example")))
    }

    @Test func errorRedirectBecomesDenied() {
        let outcome = CallbackOutcome(query: "error=access_denied&error_description=The+user+said+no&state=\(state)", expectedState: state)
        #expect(outcome == .denied(OAuthServerError(code: "access_denied", description: "The user said no")))
    }

    @Test(arguments: [
        "",  // nothing at all
        "code=c",  // no state
        "code=c&state=",  // empty state
        "code=c&state=other",  // someone else's state
        "code=c&state=Qn8x_state-VALUE2",  // longer
        "code=c&state=qn8x_state-value",  // case differs
        "code=c&state=Qn8x_state-VALU",  // prefix
        "state=Qn8x_state-VALUE",  // neither code nor error
        "code=&state=Qn8x_state-VALUE",  // empty code
        "code=a&code=b&state=Qn8x_state-VALUE",  // duplicate code
        "code=c&state=Qn8x_state-VALUE&state=Qn8x_state-VALUE",  // duplicate state
        "code=%ZZ&state=Qn8x_state-VALUE",  // bad percent-encoding
        "code=%4&state=Qn8x_state-VALUE",  // truncated escape
        "code=%FF%FE&state=Qn8x_state-VALUE",  // not UTF-8
        "error=access_denied",  // error without state: not ours
        "error=access_denied&state=wrong",  // error with wrong state: an attacker cannot end the login
    ])
    func malformedOrForeignRedirectsAreRejectedNotFatal(query: String) {
        let outcome = CallbackOutcome(query: Substring(query), expectedState: state)
        guard case .rejected = outcome else {
            Issue.record("expected .rejected for '\(query)', got \(outcome)")
            return
        }
    }

    @Test func emptyErrorCodeIsStillAnError() {
        #expect(
            CallbackOutcome(query: "error=&state=\(state)", expectedState: state)
                == .denied(OAuthServerError(code: "unknown_error")))
    }

    @Test func formDecodingRules() {
        #expect(FormURLEncoding.decode("a+b%20c") == "a b c")
        #expect(FormURLEncoding.decode("%e2%82%ac") == "€")
        #expect(FormURLEncoding.encode("a b&c=d/é~") == "a%20b%26c%3Dd%2F%C3%A9~")
        let pairs = FormURLEncoding.parse("a=1&&b&c=x=y")!
        #expect(pairs.map(\.name) == ["a", "b", "c"])
        #expect(pairs.map(\.value) == ["1", "", "x=y"])
    }
}

@Suite struct PastedRedirectTests {
    let redirect = "http://127.0.0.1:5555/callback"
    let state = "st-1"

    @Test func theWholeAddressIsAccepted() {
        #expect(
            CallbackOutcome(pastedURL: "  http://127.0.0.1:5555/callback?code=abc%3D%3D&state=st-1 \n", redirectURI: redirect, expectedState: state)
                == .authorized(AuthorizationResponse(code: "abc==", state: state)))
        // The browser elsewhere may show localhost or another port; the path and the state decide.
        #expect(
            CallbackOutcome(pastedURL: "http://localhost:9/callback?state=st-1&code=c#frag", redirectURI: redirect, expectedState: state)
                == .authorized(AuthorizationResponse(code: "c", state: state)))
        #expect(
            CallbackOutcome(
                pastedURL: "http://127.0.0.1:5555/callback?error=access_denied&state=st-1", redirectURI: redirect,
                expectedState: state) == .denied(OAuthServerError(code: "access_denied")))
    }

    @Test(arguments: [
        "abc",  // just a code
        "http://127.0.0.1:5555/callback",  // no query
        "http://127.0.0.1:5555/other?code=c&state=st-1",  // another path
        "http://127.0.0.1:5555/callback?code=c&state=st-2",  // another login's state
        "http://127.0.0.1:5555/callback?code=c",  // no state
    ])
    func foreignOrIncompleteAddressesAreRejected(line: String) {
        guard case .rejected = CallbackOutcome(pastedURL: line, redirectURI: redirect, expectedState: state) else {
            Issue.record("accepted '\(line)'")
            return
        }
    }
}
