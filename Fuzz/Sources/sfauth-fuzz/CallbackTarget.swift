import SFAuth

/// The redirect back from the authorization endpoint: the query a request to the callback path
/// carries, the same as a pasted address, and the form decoding under both.
///
/// Input: the query (or address) as text. The expected `state` is `s-0S6_WzA2Mj` (in the dictionary).
@Sendable func fuzzCallback(_ data: UnsafeRawBufferPointer) {
    let text = FuzzInput.text(data)
    let state = "s-0S6_WzA2Mj"
    describe(CallbackOutcome(query: Substring(text), expectedState: state))
    // A query that starts inside a larger string (the listener passes a slice of the request line).
    describe(CallbackOutcome(query: Substring(text).dropFirst(), expectedState: state))
    for redirectURI in ["http://localhost:1717/OauthRedirect", "http://127.0.0.1:8080/callback", "http://[::1]"] {
        describe(CallbackOutcome(pastedURL: text, redirectURI: redirectURI, expectedState: state))
    }
    // Form decoding: whatever parses re-encodes to something that parses back to the same pairs.
    if let pairs = FormURLEncoding.parse(Substring(text)) {
        let encoded = FormURLEncoding.encode(pairs.map { ($0.name, $0.value) })
        guard let again = FormURLEncoding.parse(Substring(encoded)) else {
            preconditionFailure("FormURLEncoding: '\(encoded)' (encoded from parsed pairs) does not parse")
        }
        precondition(
            again.map(\.name) == pairs.map(\.name) && again.map(\.value) == pairs.map(\.value),
            "FormURLEncoding: round trip of \(pairs) gave \(again)")
    }
    _ = FormURLEncoding.decode(Substring(text))
}

private func describe(_ outcome: CallbackOutcome) {
    switch outcome {
    case .authorized(let response): _ = response.code.utf8.count + response.state.utf8.count
    case .denied(let error): _ = error.summary
    case .rejected(let reason): _ = reason.utf8.count
    }
}
