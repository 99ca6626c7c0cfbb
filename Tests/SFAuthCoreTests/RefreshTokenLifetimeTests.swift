import FoundationEssentials
import Testing

@testable import SFAuthCore

/// The refresh token's lifetime, where a server says it (GitHub Apps' `refresh_token_expires_in`,
/// Keycloak's `refresh_expires_in`): read from the answer, recorded at sign-in, and carried, replaced
/// or forgotten by each refresh as the refresh token itself is kept or replaced.
@Suite struct RefreshTokenLifetimeTests {
    let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    func tokens(_ json: String) throws(OAuthError) -> TokenResponse {
        try TokenResponse.decode(
            HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Array(json.utf8)), endpoint: "E")
    }

    func signedIn(_ json: String) throws -> OAuthCredentials {
        OAuthCredentials(response: try tokens(json), server: server, client: ClientConfiguration(clientId: "c"), obtainedBy: .browser, now: now)
    }

    // MARK: Reading the answer

    @Test(arguments: [
        (#""refresh_token_expires_in":15897600"#, 15_897_600.0),
        (#""refresh_token_expires_in":"15897600""#, 15_897_600.0),
        (#""refresh_expires_in":1800"#, 1800.0),
        (#""refresh_expires_in":" 1800 ""#, 1800.0),
        (#""refresh_expires_in":0"#, 0.0),
        (#""refresh_expires_in":"0""#, 0.0),
        (#""refresh_expires_in":1e300"#, TokenResponse.maximumLifetime),
        // GitHub's name wins where both are sent.
        (#""refresh_token_expires_in":60,"refresh_expires_in":1800"#, 60.0),
    ])
    func theLifetimeIsReadAsExpiresInIs(member: String, seconds: Double) throws {
        let response = try tokens(#"{"access_token":"a","refresh_token":"r",\#(member)}"#)
        #expect(response.refreshTokenExpiresIn == seconds)
    }

    /// A lifetime that is not a number of seconds ≥ 0 is ignored, not a refused sign-in: it only
    /// tells people when to sign in again.
    @Test(arguments: [#""soon""#, "-5", "true", "{}", "null", #""nan""#, #""1e400""#])
    func anUnusableLifetimeIsIgnored(value: String) throws {
        let response = try tokens(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":\#(value)}"#)
        #expect(response.refreshTokenExpiresIn == nil)
        #expect(try signedIn(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":\#(value)}"#).refreshTokenExpiry == nil)
    }

    @Test func aFormEncodedGitHubAnswerCarriesIt() throws {
        let body = "access_token=ghu_1&expires_in=28800&refresh_token=ghr_1&refresh_token_expires_in=15897600&token_type=bearer"
        let response = try TokenResponse.decode(
            HTTPResponse(status: 200, headers: ["content-type": "application/x-www-form-urlencoded"], body: Array(body.utf8)), endpoint: "E")
        #expect(response.refreshTokenExpiresIn == 15_897_600)
    }

    // MARK: Sign-in

    @Test func aSignInRecordsTheExpiry() throws {
        let github = try signedIn(#"{"access_token":"a","refresh_token":"r","refresh_token_expires_in":"15897600"}"#)
        #expect(github.refreshTokenExpiry == .at(now.addingTimeInterval(15_897_600), lifetime: 15_897_600))
        #expect(github.refreshTokenExpiresAt == now.addingTimeInterval(15_897_600) && github.refreshTokenLifetime == 15_897_600)
        let keycloak = try signedIn(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":1800.7}"#)
        #expect(keycloak.refreshTokenExpiry == .at(now.addingTimeInterval(1800), lifetime: 1800.7), "whole seconds, rounded down")
    }

    @Test func zeroMeansNoFixedExpiry() throws {
        let offline = try signedIn(#"{"access_token":"a","refresh_token":"r","refresh_expires_in":0}"#)
        #expect(offline.refreshTokenExpiry == .noFixedExpiry)
        #expect(offline.refreshTokenExpiresAt == nil && offline.refreshTokenLifetime == 0)
        #expect(offline.refreshTokenExpiry?.isDue(at: now.addingTimeInterval(1e9)) == false)
    }

    @Test func nothingIsRecordedWithoutARefreshTokenOrALifetime() throws {
        #expect(try signedIn(#"{"access_token":"a","refresh_expires_in":1800}"#).refreshTokenExpiry == nil)
        #expect(try signedIn(#"{"access_token":"a","refresh_token":"r"}"#).refreshTokenExpiry == nil)
    }

    // MARK: Refresh

    @Test func aRefreshWithANewLifetimeReplacesIt() throws {
        let stored = try signedIn(#"{"access_token":"a","refresh_token":"r1","refresh_expires_in":1800}"#)
        let later = now.addingTimeInterval(600)
        let rotated = stored.refreshed(with: try tokens(#"{"access_token":"b","refresh_token":"r2","refresh_expires_in":"1800"}"#), now: later)
        #expect(rotated.refreshTokenExpiry == .at(later.addingTimeInterval(1800), lifetime: 1800))
        // The same refresh token with a lifetime: the server's word is the newest.
        let kept = stored.refreshed(with: try tokens(#"{"access_token":"b","refresh_token":"r1","refresh_expires_in":0}"#), now: later)
        #expect(kept.refreshTokenExpiry == .noFixedExpiry)
    }

    @Test func aRotationWithoutALifetimeLeavesItUnknown() throws {
        let stored = try signedIn(#"{"access_token":"a","refresh_token":"r1","refresh_token_expires_in":15897600}"#)
        let rotated = stored.refreshed(with: try tokens(#"{"access_token":"b","refresh_token":"r2"}"#), now: now)
        #expect(rotated.refreshToken == "r2")
        #expect(rotated.refreshTokenExpiry == nil)
        #expect(rotated.refreshTokenExpiresAt == nil && rotated.refreshTokenLifetime == nil)
    }

    @Test func keepingTheRefreshTokenKeepsItsExpiry() throws {
        let stored = try signedIn(#"{"access_token":"a","refresh_token":"r1","refresh_token_expires_in":15897600}"#)
        let expiry = try #require(stored.refreshTokenExpiry)
        let withoutOne = stored.refreshed(with: try tokens(#"{"access_token":"b"}"#), now: now.addingTimeInterval(60))
        #expect(withoutOne.refreshToken == "r1" && withoutOne.refreshTokenExpiry == expiry)
        let sameOne = stored.refreshed(with: try tokens(#"{"access_token":"b","refresh_token":"r1"}"#), now: now.addingTimeInterval(60))
        #expect(sameOne.refreshTokenExpiry == expiry)
    }

    /// A refresh token kept in the keyring is not in the record: the token the request carried tells
    /// a rotation from the same token sent again.
    @Test func theSentRefreshTokenTellsARotationWhenTheRecordHoldsNone() throws {
        var stored = try signedIn(#"{"access_token":"a","refresh_token":"r1","refresh_expires_in":0}"#)
        stored.refreshToken = nil
        stored.refreshTokenInSecretStore = true
        let same = try tokens(#"{"access_token":"b","refresh_token":"r1"}"#)
        #expect(stored.refreshed(with: same, now: now, sentRefreshToken: "r1").refreshTokenExpiry == .noFixedExpiry)
        let rotated = try tokens(#"{"access_token":"b","refresh_token":"r2"}"#)
        #expect(stored.refreshed(with: rotated, now: now, sentRefreshToken: "r1").refreshTokenExpiry == nil)
    }

    // MARK: When a new sign-in is due

    @Test func aSignInIsDueWithinSevenDays() {
        let expiry = RefreshTokenExpiry.at(now, lifetime: 15_897_600)
        #expect(!expiry.isDue(at: now.addingTimeInterval(-7 * 86_400 - 1)))
        #expect(expiry.isDue(at: now.addingTimeInterval(-7 * 86_400)))
        #expect(expiry.isDue(at: now.addingTimeInterval(-1)) && !expiry.hasPassed(at: now.addingTimeInterval(-1)))
        #expect(expiry.isDue(at: now) && expiry.hasPassed(at: now))
        #expect(!RefreshTokenExpiry.noFixedExpiry.isDue(at: now) && !RefreshTokenExpiry.noFixedExpiry.hasPassed(at: now))
    }

    /// Keycloak's 30 minutes are an idle timeout each refresh renews: never "due" (a new sign-in
    /// would start another 30 minutes), only expired once past.
    @Test func aLifetimeWithinTheWindowIsNeverDueOnlyExpired() {
        let idle = RefreshTokenExpiry.at(now, lifetime: 1800)
        #expect(!idle.isDue(at: now.addingTimeInterval(-60)) && !idle.isDue(at: now.addingTimeInterval(60)))
        #expect(idle.hasPassed(at: now.addingTimeInterval(60)))
        #expect(!RefreshTokenExpiry.at(now, lifetime: 7 * 86_400).isDue(at: now))
    }

    /// The stored pair read as one value, and written back the same.
    @Test func theRecordsMembersAreOneValue() {
        var credentials = OAuthCredentials(
            identifier: "i", server: server, clientId: "c", redirectURI: "", accessToken: "a", tokenType: "Bearer", issuedAt: now)
        credentials.refreshTokenExpiresAt = now
        #expect(credentials.refreshTokenExpiry == .at(now, lifetime: .infinity), "a hand-edited record: taken as long-lived")
        credentials.refreshTokenExpiry = .at(now, lifetime: .infinity)
        #expect(credentials.refreshTokenLifetime == nil, "never an infinite number in the file")
        credentials.refreshTokenExpiry = .noFixedExpiry
        #expect(credentials.refreshTokenExpiresAt == nil && credentials.refreshTokenLifetime == 0)
        credentials.refreshTokenExpiry = nil
        #expect(credentials.refreshTokenExpiresAt == nil && credentials.refreshTokenLifetime == nil)
    }
}
