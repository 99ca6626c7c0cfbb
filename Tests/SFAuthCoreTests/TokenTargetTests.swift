import Foundation
import Testing

@testable import SFAuthCore

/// The pure rules of per-call tokens: what a target is, how it is asked for (RFC 6749 §6, RFC 8707
/// §2.2, RFC 8693, Entra's `.default`), what an answer must show, and when a token must be renewed
/// to last `--min-valid`.
@Suite struct TokenTargetTests {
    let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/authorize", tokenEndpoint: "https://idp.example/token")
    let entra = AuthorizationServer(
        authorizationEndpoint: "https://login.microsoftonline.com/t/oauth2/v2.0/authorize",
        tokenEndpoint: "https://login.microsoftonline.com/t/oauth2/v2.0/token")

    static func jwt(_ claims: String) -> String {
        Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + ".c2ln"
    }

    @Test func aTargetIsKeyedWhateverTheOrderOfItsScopes() {
        let one = TokenTarget(scopes: ["read write", "read"], audience: "api")
        let other = TokenTarget(scopes: ["write", "read"], audience: "api")
        #expect(one.scopes == ["read", "write"])
        #expect(one.key == other.key)
        #expect(one.key != TokenTarget(scopes: ["read"], audience: "api").key)
        #expect(TokenTarget(scopes: [], audience: "").isEmpty)
        #expect(one.summary == "scope 'read write', audience 'api'")
    }

    @Test func scopesAloneAreAskedOfARefresh() throws {
        let plan = try TargetPlan.make(target: TokenTarget(scopes: ["read"]), server: server, offersExchange: true, forceExchange: false)
        #expect(plan.routes == [.refresh])
        #expect(plan.parameters(for: .refresh).map { "\($0.0)=\($0.1)" } == ["scope=read"])
    }

    @Test func aResourceIsAskedOfARefreshThenOfAnExchangeWhereOffered() throws {
        let target = TokenTarget(resource: "https://api.example/")
        #expect(try TargetPlan.make(target: target, server: server, offersExchange: true, forceExchange: false).routes == [.refresh, .exchange])
        #expect(try TargetPlan.make(target: target, server: server, offersExchange: false, forceExchange: false).routes == [.refresh])
        #expect(try TargetPlan.make(target: target, server: server, offersExchange: false, forceExchange: true).routes == [.exchange])
    }

    @Test func anAudienceNeedsAnExchange() throws {
        let target = TokenTarget(audience: "downstream")
        #expect(try TargetPlan.make(target: target, server: server, offersExchange: true, forceExchange: false).routes == [.exchange])
        let refused = #expect(throws: OAuthError.self) {
            try TargetPlan.make(target: target, server: server, offersExchange: false, forceExchange: false)
        }
        #expect(refused?.description.contains("does not offer token exchange") == true)
    }

    @Test func entraNamesTheResourceByScope() throws {
        #expect(TargetPlan.isEntra(entra) && !TargetPlan.isEntra(server))
        let plan = try TargetPlan.make(target: TokenTarget(resource: "api://orders/"), server: entra, offersExchange: false, forceExchange: false)
        #expect(plan.routes == [.refresh])
        #expect(plan.parameters(for: .refresh).map { "\($0.0)=\($0.1)" } == ["scope=api://orders/.default offline_access"])
        let named = try TargetPlan.make(
            target: TokenTarget(scopes: ["Orders.Read"], audience: "api://orders"), server: entra, offersExchange: false, forceExchange: false)
        #expect(named.entraScopes == ["api://orders/Orders.Read", "offline_access"])
        #expect(throws: OAuthError.self) {
            try TargetPlan.make(target: TokenTarget(audience: "a", resource: "https://b"), server: entra, offersExchange: false, forceExchange: false)
        }
    }

    @Test func anExchangeAsksForAnAccessTokenForTheSubject() {
        let request = TokenExchange.request(
            subjectToken: "at-0", parameters: [("audience", "downstream")], tokenEndpoint: "https://idp.example/token",
            client: ClientConfiguration(clientId: "cli"))
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=at-0"
                + "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
                + "&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&audience=downstream&client_id=cli")
        let refreshIssued = HTTPResponse(
            status: 200,
            body: Array(#"{"access_token":"rt","issued_token_type":"urn:ietf:params:oauth:token-type:refresh_token","token_type":"N_A"}"#.utf8))
        #expect(throws: OAuthError.self) { try TokenExchange.requireAccessToken(in: refreshIssued, endpoint: "https://idp.example/token") }
    }

    @Test func anAnswerMustBeNoWiderAndForWhatWasAsked() throws {
        let scoped = try TargetPlan.make(target: TokenTarget(scopes: ["read"]), server: server, offersExchange: false, forceExchange: false)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: "opaque", scopes: ["read"]), for: scoped) == nil)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: "opaque"), for: scoped) == nil)  // RFC 6749 §5.1: as asked
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: "opaque", scopes: ["read", "write"]), for: scoped)?.contains("wider") == true)

        let resource = try TargetPlan.make(
            target: TokenTarget(resource: "https://api.example/"), server: server, offersExchange: false, forceExchange: false)
        let forIt = Self.jwt(#"{"aud":["cli","https://API.example"]}"#)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: forIt), for: resource) == nil)
        let ignored = Self.jwt(#"{"aud":"cli"}"#)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: ignored), for: resource)?.contains("did not honour") == true)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: "opaque"), for: resource)?.contains("does not say what it is for") == true)

        let audience = try TargetPlan.make(target: TokenTarget(audience: "downstream"), server: server, offersExchange: true, forceExchange: false)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: Self.jwt(#"{"aud":"downstream"}"#)), for: audience) == nil)
        #expect(TargetCheck.problem(with: TokenResponse(accessToken: Self.jwt(#"{"aud":"other"}"#)), for: audience) != nil)
        #expect(TargetCheck.audiences(of: "a.b") == nil && TargetCheck.audiences(of: Self.jwt("{}")) == nil)
    }

    @Test func minimumValidityRenewsEarlierUnlessTheServerCannotMeetIt() {
        let freshness = TokenFreshness(leeway: 60)
        // The leeway alone: at most half the lifetime.
        #expect(freshness.renewalMargin(lifetime: 3600, minimumValidity: nil) == 60)
        #expect(freshness.renewalMargin(lifetime: 10, minimumValidity: nil) == 5)
        // Asked for 10 minutes of a one-hour token: renewed with less than 10 minutes left.
        #expect(freshness.renewalMargin(lifetime: 3600, minimumValidity: 600) == 600)
        // A 5-minute token can never last 10: renewed at half its life, not on every call.
        #expect(freshness.renewalMargin(lifetime: 300, minimumValidity: 600) == 150)

        let issued = Date(timeIntervalSince1970: 1_700_000_000)
        let token = TargetedToken(
            target: TokenTarget(scopes: ["read"]), accessToken: "t", tokenType: "Bearer", issuedAt: issued,
            expiresAt: issued.addingTimeInterval(3600), scopes: nil, obtainedBy: .refresh)
        #expect(freshness.isUsable(token, at: issued.addingTimeInterval(2900), minimumValidity: 600))
        #expect(!freshness.isUsable(token, at: issued.addingTimeInterval(3100), minimumValidity: 600))
        #expect(freshness.isUsable(token, at: issued.addingTimeInterval(3100), minimumValidity: nil))
    }
}
