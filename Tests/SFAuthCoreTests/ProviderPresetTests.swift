import Foundation
import SFAuthCore
import Testing

/// What each identity provider's preset turns its keys into, and the provider conventions behind
/// them (Entra's issuer template, Okta's default server, Auth0's trailing slash, Cognito's domain).
@Suite struct ProviderPresetTests {
    @Test func everyPresetIsFoundByItsName() {
        for preset in ProviderPreset.all { #expect(ProviderPreset.named(preset.name) == preset) }
        #expect(Set(ProviderPreset.all.map(\.name)).count == ProviderPreset.all.count)
        #expect(ProviderPreset.all.filter { $0.clientId == nil }.allSatisfy { $0.name == "oidc" || $0.registration != nil })
    }

    @Test func eachPresetPointsAtTheUsersOwnInstance() throws {
        let target = { (preset: ProviderPreset, instance: ProviderPreset.Instance) throws -> ProviderPreset.DiscoveryTarget? in
            try preset.discoveryTarget(instance)
        }
        #expect(try target(.gitlab, .init())?.issuer == "https://gitlab.com")
        #expect(try target(.gitlab, .init(host: "gitlab.example.com"))?.issuer == "https://gitlab.example.com")
        #expect(try target(.entra, .init())?.issuer == "https://login.microsoftonline.com/organizations/v2.0")
        #expect(
            try target(.entra, .init(tenant: "common", authority: "https://login.microsoftonline.us"))?.issuer
                == "https://login.microsoftonline.us/common/v2.0")
        let okta = try target(.okta, .init(issuer: "https://acme.okta.com"))
        #expect(okta?.issuer == "https://acme.okta.com/oauth2/default")
        #expect(okta?.notice?.contains("org authorization server") == true)
        #expect(try target(.okta, .init(issuer: "https://acme.okta.com/oauth2/aus1"))?.issuer == "https://acme.okta.com/oauth2/aus1")
        #expect(try target(.okta, .init(issuer: "https://acme.okta.com/oauth2/aus1"))?.notice == nil)
        #expect(try target(.auth0, .init(issuer: "acme.eu.auth0.com"))?.issuer == "https://acme.eu.auth0.com/")
        #expect(try target(.auth0, .init(issuer: "https://acme.eu.auth0.com/"))?.issuer == "https://acme.eu.auth0.com/")
        let cognito = try target(
            .cognito, .init(issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_X", domain: "acme.auth.eu-west-1.amazoncognito.com"))
        #expect(cognito?.issuer == "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_X")
        #expect(cognito?.authorizationEndpoint == "https://acme.auth.eu-west-1.amazoncognito.com/oauth2/authorize")
        #expect(cognito?.tokenEndpoint == "https://acme.auth.eu-west-1.amazoncognito.com/oauth2/token")
        #expect(try target(.github, .init()) == nil)
        #expect(try target(.google, .init())?.issuer == "https://accounts.google.com")
    }

    @Test func badKeysAreRefusedWithWhatToGive() {
        #expect(throws: OAuthError.self) { try ProviderPreset.entra.discoveryTarget(.init(tenant: "{tenantid}")) }
        #expect(throws: OAuthError.self) { try ProviderPreset.entra.discoveryTarget(.init(tenant: "a/b")) }
        #expect(throws: OAuthError.self) { try ProviderPreset.entra.discoveryTarget(.init(authority: "http://login.example")) }
        #expect(throws: OAuthError.self) { try ProviderPreset.gitlab.discoveryTarget(.init(host: "gitlab.example.com/path")) }
        #expect(throws: OAuthError.self) { try ProviderPreset.okta.discoveryTarget(.init()) }
        #expect(throws: OAuthError.self) { try ProviderPreset.cognito.discoveryTarget(.init(issuer: "https://x", domain: "http://evil.example")) }
    }

    @Test func entrasDocumentedIssuersAreTheOnlyExceptionsToAnExactMatch() {
        let authority = "https://login.microsoftonline.com"
        #expect(Entra.isDocumentedIssuer(authority + "/{tenantid}/v2.0", for: authority + "/common/v2.0"))
        #expect(Entra.isDocumentedIssuer(authority + "/{tenantid}/v2.0", for: authority + "/organizations/v2.0"))
        #expect(Entra.isDocumentedIssuer(authority + "/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0", for: authority + "/consumers/v2.0"))
        // Another origin, another tenant, or the template for a named tenant: not Entra's documented answer.
        #expect(!Entra.isDocumentedIssuer("https://evil.example/{tenantid}/v2.0", for: authority + "/common/v2.0"))
        #expect(!Entra.isDocumentedIssuer(authority + "/6f2a3b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b/v2.0", for: authority + "/common/v2.0"))
        #expect(!Entra.isDocumentedIssuer(authority + "/{tenantid}/v2.0", for: authority + "/6f2a3b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b/v2.0"))
        #expect(!Entra.isDocumentedIssuer(authority + "/{tenantid}/v2.0", for: authority + "/consumers/v2.0"))
    }

    @Test func theTemplateTakesTheTokensOwnTenant() {
        let template = "https://login.microsoftonline.com/{tenantid}/v2.0"
        let tenant = "6f2a3b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
        #expect(Entra.issuer(fromTemplate: template, tenantId: tenant) == "https://login.microsoftonline.com/\(tenant)/v2.0")
        #expect(Entra.issuer(fromTemplate: template, tenantId: nil) == nil)
        #expect(Entra.issuer(fromTemplate: template, tenantId: "../../evil.example/x-000000000000000000000") == nil)

        let check = IDTokenCheck(issuer: template, clientId: "cli", nonce: nil)
        func claims(iss: String, tid: String?) throws -> IDTokenClaims {
            var claims: [String: JSONValue] = ["iss": .string(iss), "sub": "u", "aud": "cli", "exp": 1_800_000_600, "iat": 1_800_000_000]
            if let tid { claims["tid"] = .string(tid) }
            return try IDTokenClaims(token: IDTokenCheckTests.token(claims))
        }
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(throws: Never.self) { try check.validate(try claims(iss: "https://login.microsoftonline.com/\(tenant)/v2.0", tid: tenant), now: now) }
        #expect(throws: OAuthError.self) {
            try check.validate(
                try claims(iss: "https://login.microsoftonline.com/\(tenant)/v2.0", tid: "00000000-0000-0000-0000-000000000000"), now: now)
        }
        #expect(throws: OAuthError.self) {
            try check.validate(try claims(iss: "https://login.microsoftonline.com/\(tenant)/v2.0", tid: nil), now: now)
        }
    }

    @Test func entrasRefusalsAreReadFromTheirNumber() {
        func refusal(_ description: String) -> EntraRefusal? {
            OAuthServerError(code: "invalid_client", description: description).entraRefusal
        }
        #expect(refusal("AADSTS7000218: The request body must contain …\r\nTrace ID: 1") == .publicClientFlowsDisabled)
        #expect(
            refusal("AADSTS50011: The redirect URI 'http://127.0.0.1:5000/callback' specified in the request does not match …")
                == .redirectNotRegistered("http://127.0.0.1:5000/callback"))
        #expect(refusal("AADSTS65001: The user or administrator has not consented …") == .consentRequired)
        #expect(refusal("AADSTS28000: Provided value for the input parameter scope is not valid …") == .oneResourcePerToken)
        #expect(refusal("AADSTS90002: Tenant 'x' not found.") == nil)
        #expect(refusal("invalid client") == nil)
        let error = OAuthServerError(
            code: "invalid_client", description: "AADSTS7000218: The request body must contain it.\r\nTrace ID: 1\r\nCorrelation ID: 2")
        #expect(error.summary == "invalid_client: AADSTS7000218: The request body must contain it.")
        #expect(error.knownRemedy == .answerEntraRefusal(.publicClientFlowsDisabled))
    }

    @Test func googlesClientFileGivesTheDesktopClient() throws {
        let installed =
            #"{"installed":{"client_id":"1-x.apps.googleusercontent.com","client_secret":"GOCSPX-s","token_uri":"https://oauth2.googleapis.com/token"}}"#
        let file = try GoogleClientFile(parsing: Array(installed.utf8), path: "f.json")
        #expect(file.clientId == "1-x.apps.googleusercontent.com" && file.clientSecret == "GOCSPX-s")
        #expect(file.tokenEndpoint == "https://oauth2.googleapis.com/token")
        #expect(throws: OAuthError.self) { try GoogleClientFile(parsing: Array(#"{"web":{"client_id":"w"}}"#.utf8), path: "w.json") }
        #expect(throws: OAuthError.self) { try GoogleClientFile(parsing: Array("not json".utf8), path: "n.json") }
        let expired = OAuthServerError(code: "invalid_grant", description: "Token has been expired or revoked.")
        #expect(expired.providerExplanation?.contains("Testing") == true)
        #expect(OAuthServerError(code: "invalid_grant", description: "Bad Request").providerExplanation == nil)
    }
}
