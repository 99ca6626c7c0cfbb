import FoundationEssentials
import Testing

@testable import SFAuthCore

/// Answers no one expected: numbers out of every range, tokens and texts with terminal controls,
/// servers that do not say who signed in. Each case here once crashed sfauth or misled its user.
@Suite struct HostileInputTests {
    let server = AuthorizationServer(
        authorizationEndpoint: "http://127.0.0.1:8000/o/authorize/",
        tokenEndpoint: "http://127.0.0.1:8000/o/token/")
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func tokens(_ json: String, status: Int = 200) throws(OAuthError) -> TokenResponse {
        try TokenResponse.decode(
            HTTPResponse(status: status, headers: ["content-type": "application/json"], body: Array(json.utf8)),
            endpoint: "E")
    }

    func credentials(_ response: TokenResponse, grant: AuthType = .browser) -> OAuthCredentials {
        OAuthCredentials(response: response, server: server, client: ClientConfiguration(clientId: "c"), obtainedBy: grant, now: now)
    }

    // MARK: Numbers

    @Test(arguments: ["\"nan\"", "\"inf\"", "\"-inf\"", "\"infinity\"", "\"1e400\"", "1e300", "-5", "\"NaN\""])
    func issuedAtOutOfRangeIsIgnored(value: String) throws {
        let response = try tokens(#"{"access_token":"a","issued_at":\#(value)}"#)
        #expect(response.issuedAt == nil)
        let stored = credentials(response)
        #expect(stored.issuedAt == now)
        _ = stored.isExpired(at: now, assumedLifetime: 7200)
        #expect(stored.expiry(assumedLifetime: 7200).unixSeconds == 1_700_007_200)
    }

    @Test func issuedAtDaysAwayFromNowIsNotBelieved() throws {
        // A millisecond timestamp from 1970, or from the far future: the response time is used.
        for milliseconds in ["0", "99999999999999"] {
            let stored = credentials(try tokens(#"{"access_token":"a","issued_at":"\#(milliseconds)"}"#))
            #expect(stored.issuedAt == now, "\(milliseconds)")
        }
        let skewed = credentials(try tokens(#"{"access_token":"a","issued_at":"1699999880000"}"#))
        #expect(skewed.issuedAt == Date(timeIntervalSince1970: 1_699_999_880))
    }

    @Test(arguments: ["1e300", "\"1e300\"", "1.7976931348623157e308"])
    func hugeExpiresInIsClampedToTenYears(value: String) throws {
        let response = try tokens(#"{"access_token":"a","expires_in":\#(value)}"#)
        #expect(response.expiresIn == TokenResponse.maximumLifetime)
        let stored = credentials(response)
        #expect(stored.expiresAt == now.addingTimeInterval(TokenResponse.maximumLifetime))
        #expect(!stored.isExpired(at: now))
        #expect(stored.expiry(assumedLifetime: .infinity).unixSeconds > 0)
    }

    @Test(arguments: ["\"nan\"", "\"inf\"", "\"1e400\"", "-1", "\"soon\"", "true"])
    func expiresInThatIsNotSecondsIsRefused(value: String) {
        #expect(throws: OAuthError.invalidServerResponse("the token response's expires_in is not a number of seconds")) {
            try tokens(#"{"access_token":"a","expires_in":\#(value)}"#)
        }
    }

    @Test func deviceNumbersAreClamped() throws {
        func decode(_ json: String) throws(OAuthError) -> DeviceAuthorization {
            try DeviceAuthorization.decode(HTTPResponse(status: 200, body: Array(json.utf8)), endpoint: "E")
        }
        let base = #""device_code":"d","user_code":"U","verification_uri":"https://v.example/""#
        let absurd = try decode("{\(base),\"expires_in\":1e300,\"interval\":1e20}")
        #expect(absurd.interval == DeviceAuthorization.maximumInterval)
        #expect(absurd.expiresIn == DeviceAuthorization.maximumLifetime)
        let tiny = try decode("{\(base),\"expires_in\":600,\"interval\":-3}")
        #expect(tiny.interval == 1)
        for expiresIn in ["\"1e400\"", "\"nan\"", "0", "0.5"] {
            #expect(throws: OAuthError.self, "\(expiresIn)") { try decode("{\(base),\"expires_in\":\(expiresIn)}") }
        }
        // Many slow_downs never overflow the interval.
        var polling = DevicePolling(absurd)
        let slowDown = HTTPResponse(status: 400, body: Array(#"{"error":"slow_down"}"#.utf8))
        for _ in 0..<1000 { _ = try polling.next(after: slowDown, endpoint: "E") }
        #expect(polling.interval == DeviceAuthorization.maximumInterval)
    }

    @Test func datesBeyondInt64BecomeItsBounds() {
        #expect(Date(timeIntervalSince1970: 1e300).unixSeconds == .max)
        #expect(Date(timeIntervalSince1970: -1e300).unixSeconds == .min)
        #expect(Date(timeIntervalSince1970: 12.9).unixSeconds == 12)
    }

    // MARK: Tokens and texts

    @Test(arguments: ["a\u{1B}]0;pwned\u{7}", "tok\nen", "t\u{202E}x", "caf\u{E9}"])
    func tokensWithCharactersRFC6749ForbidsAreRefused(token: String) throws {
        let json = String(decoding: try JSONEncoder().encode(["access_token": token]), as: UTF8.self)
        #expect(throws: OAuthError.self) { try tokens(json) }
        let refresh = String(decoding: try JSONEncoder().encode(["access_token": "ok", "refresh_token": token]), as: UTF8.self)
        #expect(throws: OAuthError.self) { try tokens(refresh) }
    }

    @Test func serverWordsAreEscapedForTheTerminal() {
        let error = OAuthServerError(code: "invalid_grant\u{1B}[2J", description: "bad\u{7}\nthing \u{202E}gnp.exe")
        #expect(error.summary == "invalid_grant\\u{1B}[2J: bad\\u{7}\\u{A}thing \\u{202E}gnp.exe")
        #expect(!OAuthError.tokenRequestRejected(error).description.contains("\u{1B}"))
        let long = OAuthServerError(code: "x", description: String(repeating: "y", count: 5000))
        #expect(long.summary.count < 500)
        #expect(TerminalText.escaped("plain text, tabs\tand ümlauts") == "plain text, tabs\tand ümlauts")
        #expect(TerminalText.escaped("two\nlines", keepingNewlines: true) == "two\nlines")
        #expect(TerminalText.escaped("\u{9B}31m\u{7F}\u{2066}") == "\\u{9B}31m\\u{7F}\\u{2066}")
    }

    @Test func theRotatedRefreshTokenIsReadBeforeAnythingElse() {
        let unusable = HTTPResponse(status: 200, body: Array(#"{"refresh_token":"new-rt","token_type":"mac"}"#.utf8))
        #expect(TokenResponse.rotatedRefreshToken(in: unusable) == "new-rt")
        #expect(TokenResponse.rotatedRefreshToken(in: HTTPResponse(status: 400, body: Array(#"{"refresh_token":"x"}"#.utf8))) == nil)
        #expect(TokenResponse.rotatedRefreshToken(in: HTTPResponse(status: 200, body: Array(#"{"refresh_token":"a\u001bb"}"#.utf8))) == nil)
    }

    // MARK: Leeway

    @Test func leewayNeverExceedsHalfTheTokensLifetime() throws {
        let short = credentials(try tokens(#"{"access_token":"a","expires_in":5}"#))
        #expect(!short.isExpired(at: now, leeway: 60))
        #expect(!short.isExpired(at: now.addingTimeInterval(2), leeway: 60))
        #expect(short.isExpired(at: now.addingTimeInterval(2.5), leeway: 60))
        let minute = credentials(try tokens(#"{"access_token":"a","expires_in":60}"#))
        #expect(!minute.isExpired(at: now.addingTimeInterval(29), leeway: 60))
        #expect(minute.isExpired(at: now.addingTimeInterval(30), leeway: 60))
        let hour = credentials(try tokens(#"{"access_token":"a","expires_in":3600}"#))
        #expect(!hour.isExpired(at: now.addingTimeInterval(3539), leeway: 60))
        #expect(hour.isExpired(at: now.addingTimeInterval(3540), leeway: 60))
        // Salesforce: no expires_in, the assumed two hours.
        let salesforce = credentials(try tokens(#"{"access_token":"a"}"#))
        #expect(!salesforce.isExpired(at: now.addingTimeInterval(7139), leeway: 60, assumedLifetime: 7200))
        #expect(salesforce.isExpired(at: now.addingTimeInterval(7140), leeway: 60, assumedLifetime: 7200))
        #expect(salesforce.isExpired(at: now.addingTimeInterval(7200), leeway: 0, assumedLifetime: 7200))
    }

    // MARK: Who signed in

    @Test func aSignInWhoseUserIsUnknownIsNeverAStoredAccount() throws {
        let anonymous = credentials(try tokens(#"{"access_token":"a"}"#))
        #expect(!anonymous.isIdentified)
        #expect(anonymous.identifier == "127.0.0.1:8000/unidentified")
        #expect(AccountIdentifier.unidentified(server: server, number: 2) == "127.0.0.1:8000/unidentified-2")
        #expect(AccountIdentifier.isUnidentified("127.0.0.1:8000/unidentified-2"))
        #expect(!AccountIdentifier.isUnidentified("127.0.0.1:8000/unidentified-user"))
        // The client credentials grant signs the client in: that is an identity.
        let service = credentials(try tokens(#"{"access_token":"a"}"#), grant: .clientCredentials)
        #expect(service.isIdentified)
        #expect(service.identifier == "127.0.0.1:8000/client:c")
        let named = OAuthCredentials(
            response: try tokens(#"{"access_token":"a"}"#), server: server,
            client: ClientConfiguration(clientId: "c"), obtainedBy: .password, username: "alice", now: now)
        #expect(named.identifier == "127.0.0.1:8000/user:alice")
    }

    @Test func laterSignInsMustNameTheIssuerTheFirstOneNamed() throws {
        var first = credentials(try tokens(#"{"access_token":"a"}"#))
        first.authorizationResponseIssuer = "http://127.0.0.1:8000/o"
        var same = first
        try same.checkIssuer(matches: first)
        same.authorizationResponseIssuer = "http://127.0.0.1:9999/o"
        #expect(throws: OAuthError.self) { try same.checkIssuer(matches: first) }
        same.authorizationResponseIssuer = nil
        #expect(throws: OAuthError.self) { try same.checkIssuer(matches: first) }
        // Nothing recorded: nothing to hold the new sign-in to.
        var unrecorded = first
        unrecorded.authorizationResponseIssuer = nil
        try first.checkIssuer(matches: unrecorded)
    }
}

@Suite struct RFC3339Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"), (1_700_000_000, "2023-11-14T22:13:20Z"), (951_782_400, "2000-02-29T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"), (1e300, "9999-12-31T23:59:59Z"), (-1e300, "0001-01-01T00:00:00Z"),
    ])
    func formats(seconds: Double, text: String) {
        #expect(Date(timeIntervalSince1970: seconds).rfc3339 == text)
    }
}

@Suite struct SalesforceFitTests {
    @Test(arguments: [
        ("acme.lightning.force.com", "acme.my.salesforce.com"),
        ("https://acme.lightning.force.com/lightning/page/home", "acme.my.salesforce.com"),
        ("acme--dev.sandbox.lightning.force.com", "acme--dev.sandbox.my.salesforce.com"),
        ("acme.my.site.com", "acme.my.salesforce.com"),
        ("acme--uat.sandbox.my.site.com", "acme--uat.sandbox.my.salesforce.com"),
        ("Acme.My.Salesforce-Setup.com", "acme.my.salesforce.com"),
        ("acme.my.salesforce.com", "acme.my.salesforce.com"),
        ("login.salesforce.com", "login.salesforce.com"),
    ])
    func pastedHostsBecomeTheMyDomain(pasted: String, myDomain: String) {
        #expect(Salesforce.server(loginHost: pasted).tokenEndpoint == "https://\(myDomain)/services/oauth2/token")
    }

    @Test func sfdxAuthURLs() throws {
        let plain = try SFDXAuthURL(parsing: "  force://PlatformCLI::5Aep861.abc@acme.my.salesforce.com\n")
        #expect(
            plain
                == SFDXAuthURL(
                    clientId: "PlatformCLI", clientSecret: nil, refreshToken: "5Aep861.abc",
                    instanceURL: "https://acme.my.salesforce.com"))
        #expect(plain.text == "force://PlatformCLI::5Aep861.abc@acme.my.salesforce.com")
        let withSecretAndUser = try SFDXAuthURL(parsing: "force://3MVG9x:s3cr3t:5Aep.x:ci@acme.com@https://acme.my.salesforce.com/")
        #expect(withSecretAndUser.clientSecret == "s3cr3t" && withSecretAndUser.refreshToken == "5Aep.x")
        #expect(withSecretAndUser.instanceURL == "https://acme.my.salesforce.com" && withSecretAndUser.isSalesforceHost)
        #expect(try SFDXAuthURL(parsing: "force://c::t@127.0.0.1:8443").isSalesforceHost == false)
        #expect(try SFDXAuthURL(parsing: "force://c::t@evilsalesforce.com").isSalesforceHost == false)
        for bad in [
            "https://acme.my.salesforce.com", "force://PlatformCLI:token@host", "force://:s:t@host", "force://c:s:t",
            "force://c:s:t@http://evil.example",
            // The instance is what the URL says after its credentials, nothing else (issue 17 §5):
            "force://c:s:t@acme.my.salesforce.com#@evil.example", "force://c:s:t@acme.my.salesforce.com?@evil.example",
            "force://c:s:t@evil.example#.my.salesforce.com", "force://c:s:t@evil.example?x=.salesforce.com",
            "force://c:s:t@evil.example\\@acme.my.salesforce.com",
        ] {
            #expect(throws: OAuthError.self, "\(bad)") { try SFDXAuthURL(parsing: bad) }
        }
    }

    @Test func knownRefusalsSayWhatToDo() {
        let blocked = OAuthError.authorizationDenied(OAuthServerError(code: "OAUTH_APP_BLOCKED", description: "this app is blocked by admin"))
        #expect(blocked.description.contains("an administrator can unblock it"))
        let approval = OAuthError.tokenRequestRejected(
            OAuthServerError(
                code: "invalid_app_access",
                description: "user is not admin approved to access this app"))
        #expect(approval.description.contains("Permitted Users"))
        #expect(
            OAuthError.authorizationDenied(OAuthServerError(code: "redirect_uri_mismatch")).description.contains(
                "port and callback path that are registered"))
        #expect(OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_client_id")).description.contains("check the client id"))
        #expect(
            OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant")).description
                == "The token endpoint refused the request: invalid_grant.")
    }
}
