import SFAuth
import Testing

@testable import SFAuthCLI

/// `sfauth doctor --issuer` / `--preset`: a server's metadata in, one line per finding out, each
/// verdict the one a sign-in would meet.
@Suite struct ServerMetadataReviewTests {
    static let issuer = "https://idp.example.com/realms/acme"
    static let location = issuer + "/.well-known/openid-configuration"

    /// A complete, healthy metadata document, with `changes` applied (`nil` removes a field).
    static func metadata(_ changes: [String: String?] = [:], issuer: String = issuer) -> [UInt8] {
        var fields: [String: String] = [
            "issuer": "\"\(issuer)\"",
            "authorization_endpoint": "\"\(issuer)/auth\"",
            "token_endpoint": "\"\(issuer)/token\"",
            "revocation_endpoint": "\"\(issuer)/revoke\"",
            "device_authorization_endpoint": "\"\(issuer)/device\"",
            "code_challenge_methods_supported": "[\"plain\", \"S256\"]",
            "authorization_response_iss_parameter_supported": "true",
            "scopes_supported": "[\"openid\", \"offline_access\"]",
        ]
        for (name, value) in changes { fields[name] = value }
        let members = fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
        return Array("{\(members.joined(separator: ", "))}".utf8)
    }

    static func review(
        _ body: [UInt8], status: Int = 200, headers: [String: String] = ["content-type": "application/json"], asked: String = issuer,
        overrides: EndpointOverrides = EndpointOverrides()
    ) -> [DoctorCheck] {
        ServerMetadataReview.checks(
            issuer: asked, overrides: overrides,
            answer: .response(location: asked + "/.well-known/openid-configuration", HTTPResponse(status: status, headers: headers, body: body)))
    }

    @Test func aHealthyServerIsAllOK() {
        let checks = Self.review(Self.metadata())
        #expect(checks.map(\.name) == ["issuer", "pkce", "revoke", "iss", "refresh", "device"])
        #expect(checks.allSatisfy { $0.verdict == .ok })
        #expect(checks[0].line == "ok      issuer   the metadata at \(Self.location) names \(Self.issuer), as asked")
        #expect(checks[1].text == "PKCE S256 is supported (code_challenge_methods_supported: plain, S256)")
        #expect(checks[2].text == "sfauth logout revokes the tokens at \(Self.issuer)/revoke")
        #expect(checks[5].text == "sfauth login --device signs in through \(Self.issuer)/device")
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var changes: [String: String?]
        var name: String
        var verdict: DoctorCheck.Verdict
        var text: String
        var testDescription: String { "\(name): \(verdict.rawValue)" }
    }

    @Test(arguments: [
        Case(
            changes: ["issuer": "\"https://idp.example.com/realms/other\""], name: "issuer", verdict: .problem,
            text:
                "the metadata at \(location) is for the issuer https://idp.example.com/realms/other, not \(issuer): sfauth refuses it; use exactly https://idp.example.com/realms/other if you trust it"
        ),
        Case(
            changes: ["issuer": "\"\(issuer)/\""], name: "issuer", verdict: .problem,
            text:
                "the metadata at \(location) is for the issuer \(issuer)/, not \(issuer): sfauth refuses it; use exactly \(issuer)/ if you trust it"
        ),
        Case(
            changes: ["code_challenge_methods_supported": nil], name: "pkce", verdict: .note,
            text: "no code_challenge_methods_supported: sfauth sends PKCE S256 anyway; the server does not say whether it checks it"),
        Case(
            changes: ["code_challenge_methods_supported": "[\"plain\"]"], name: "pkce", verdict: .problem,
            text: "code_challenge_methods_supported lists plain, not S256: sfauth refuses servers that list PKCE methods without S256"),
        Case(
            changes: ["code_challenge_methods_supported": "[]"], name: "pkce", verdict: .problem,
            text: "code_challenge_methods_supported lists no method, not S256: sfauth refuses servers that list PKCE methods without S256"),
        Case(
            changes: ["revocation_endpoint": nil], name: "revoke", verdict: .note,
            text:
                "no revocation_endpoint: sfauth logout can only forget the tokens on this machine; they stay valid at the server until they expire"
        ),
        Case(
            changes: ["authorization_response_iss_parameter_supported": nil], name: "iss", verdict: .note,
            text:
                "no authorization_response_iss_parameter_supported (RFC 9207): the defence against mix-ups rests on sfauth's state per sign-in and redirect per server; fine"
        ),
        Case(
            changes: ["authorization_response_iss_parameter_supported": "\"true\""], name: "iss", verdict: .note,
            text:
                "no authorization_response_iss_parameter_supported (RFC 9207): the defence against mix-ups rests on sfauth's state per sign-in and redirect per server; fine"
        ),
        Case(
            changes: ["scopes_supported": "[\"openid\", \"api\"]"], name: "refresh", verdict: .note,
            text:
                "scopes_supported lacks offline_access: a refresh token comes another way (a provider parameter) or not at all; without one, sfauth signs in again when the access token expires"
        ),
        Case(
            changes: ["scopes_supported": nil], name: "refresh", verdict: .note,
            text: "no scopes_supported: nothing says whether offline_access gives a refresh token; ask for the scopes the server documents (--scope)"
        ),
        Case(
            changes: ["device_authorization_endpoint": nil], name: "device", verdict: .note,
            text: "no device_authorization_endpoint: sfauth login --device is unavailable"),
        Case(
            changes: ["token_endpoint": nil], name: "endpoint", verdict: .problem,
            text: "the metadata has no token_endpoint: sfauth cannot sign in there"),
        Case(
            changes: ["revocation_endpoint": "\"http://idp.example.com/revoke\""], name: "endpoint", verdict: .problem,
            text:
                "the revocation_endpoint 'http://idp.example.com/revoke' uses plain http; only https is allowed, except to this machine (127.0.0.1, ::1, localhost): sfauth refuses the metadata"
        ),
    ])
    func findings(_ example: Case) throws {
        let check = try #require(Self.review(Self.metadata(example.changes)).first { $0.name == example.name })
        #expect(check.verdict == example.verdict)
        #expect(check.text == example.text)
    }

    @Test func entrasTenantTemplateIsANoteWhereItFitsTheIssuerAskedFor() {
        let template = "https://login.microsoftonline.com/{tenantid}/v2.0"
        let common = Self.review(Self.metadata(issuer: template), asked: "https://login.microsoftonline.com/common/v2.0")
        #expect(
            common.first
                == DoctorCheck(
                    "issuer", .note,
                    "the metadata names the issuer template \(template) (Microsoft Entra's /common and /organizations): each ID token's iss is checked against it with that token's tid"
                ))
        // A template of another server, or of another path, is a mismatch like any other.
        for asked in ["https://evil.example.com/common/v2.0", "https://login.microsoftonline.com/common/v1.0"] {
            #expect(Self.review(Self.metadata(issuer: template), asked: asked).first?.verdict == .problem)
        }
    }

    @Test func endpointsGivenInTheConfigurationCountForLogoutAndDevice() {
        let overrides = EndpointOverrides(
            revocationEndpoint: "https://idp.example.com/logout", deviceAuthorizationEndpoint: "https://idp.example.com/dev")
        let checks = Self.review(Self.metadata(["revocation_endpoint": nil, "device_authorization_endpoint": nil]), overrides: overrides)
        #expect(
            checks.first { $0.name == "revoke" }?.text
                == "sfauth logout revokes the tokens at https://idp.example.com/logout (revoke_url, configured)")
        #expect(
            checks.first { $0.name == "device" }?.text
                == "sfauth login --device signs in through https://idp.example.com/dev (device_authorization_url, configured)")
        #expect(checks.allSatisfy { $0.verdict == .ok })
    }

    @Test func plainHTTPIsANoteOnThisMachineAndAProblemElsewhere() {
        let local = "http://127.0.0.1:8080/realms/acme"
        let checks = Self.review(Self.metadata(issuer: local), asked: local)
        #expect(checks.map(\.name) == ["issuer", "http", "pkce", "revoke", "iss", "refresh", "device"])
        #expect(checks[1] == DoctorCheck("http", .note, "\(local) uses plain http to this machine: fine for a test server, never for a real one"))
        let remote = "http://idp.example.com"
        #expect(
            Self.review(Self.metadata(issuer: remote), asked: remote).first { $0.name == "http" }
                == DoctorCheck("http", .problem, "\(remote) uses plain http: sfauth refuses it (https only, except to this machine); use https"))
    }

    @Test func metadataThatCannotBeReadIsOneProblemSayingWhatToCheck() {
        let html = Self.review(Array("<html><title>Sign in</title></html>".utf8), headers: ["content-type": "text/html; charset=utf-8"])
        #expect(
            html == [
                DoctorCheck(
                    "metadata", .problem,
                    "\(Self.location) answered with an HTML page instead of JSON metadata: check the issuer URL (a login page or a proxy may be answering)"
                )
            ])
        #expect(
            Self.review(Array("[1]".utf8)).first?.text
                == "\(Self.location) answered with a body of 3 bytes (application/json) instead of JSON metadata: check the issuer URL (a login page or a proxy may be answering)"
        )
        #expect(
            Self.review(Array("{\"token_endpoint\": \"x\"}".utf8))
                == [DoctorCheck("metadata", .problem, "the metadata at \(Self.location) names no issuer: sfauth refuses it; check the issuer URL")])
        #expect(
            Self.review([], status: 403)
                == [DoctorCheck("metadata", .problem, "\(Self.location) answered HTTP 403 instead of metadata: check the issuer URL")])
        #expect(
            Self.review([], status: 503).first?.text
                == "\(Self.location) answered HTTP 503 instead of metadata: check the issuer URL; the server is failing, try again later")
        let locations = DiscoveryDocument.locations(issuer: Self.issuer)
        #expect(
            ServerMetadataReview.checks(issuer: Self.issuer, answer: .notFound(locations: locations))
                == [
                    DoctorCheck(
                        "metadata", .problem,
                        "no metadata at \(Self.location) nor https://idp.example.com/.well-known/oauth-authorization-server/realms/acme (HTTP 404): check the issuer URL; it is the server's issuer, as its tokens name it, not its login page"
                    )
                ])
        #expect(
            ServerMetadataReview.checks(issuer: Self.issuer, answer: .unreachable(location: Self.location, reason: "could not connect"))
                == [
                    DoctorCheck(
                        "metadata", .problem,
                        "could not reach \(Self.location): could not connect; check the issuer URL, the network and any proxy (a sign-in would fail the same way)"
                    )
                ])
    }

    @Test func aServerWithBuiltInEndpointsOrNoneGetsOneLine() {
        #expect(
            ServerMetadataReview.checks(.builtIn(preset: "github", authorizationEndpoint: "https://github.com/login/oauth/authorize"))
                == [
                    DoctorCheck(
                        "metadata", .note,
                        "preset github: sfauth signs in with built-in endpoints (https://github.com/login/oauth/authorize) and reads no server metadata, so there is none to check"
                    )
                ])
        #expect(
            ServerMetadataReview.checks(.unresolved("flag --preset: preset 'oidc' needs issuer; give --issuer"))
                == [DoctorCheck("config", .problem, "flag --preset: preset 'oidc' needs issuer; give --issuer (sfauth login would stop there too)")])
    }

    /// The server's lines replace the default account's clock check: they come before the clock, which
    /// is left out where they say already that there is no server to compare with or it cannot be reached.
    @Test func theServerLinesComeBeforeTheClockWhichTheyMayReplace() {
        var facts = DoctorCheckTests.facts()
        facts.server = .metadata(
            issuer: Self.issuer, overrides: EndpointOverrides(),
            answer: .response(location: Self.location, HTTPResponse(status: 200, body: Self.metadata())))
        #expect(
            DoctorCheck.checks(facts).map(\.name).suffix(7) == ["issuer", "pkce", "revoke", "iss", "refresh", "device", "clock"])
        facts.server = .metadata(issuer: Self.issuer, overrides: EndpointOverrides(), answer: .unreachable(location: Self.location, reason: "x"))
        facts.clock = .unreachable(url: Self.location, reason: "x")
        #expect(DoctorCheck.checks(facts).map(\.name).suffix(2) == ["proxy", "metadata"])
        facts.server = .unresolved("no")
        facts.clock = .noServer
        #expect(DoctorCheck.checks(facts).map(\.name).suffix(2) == ["proxy", "config"])
    }
}
