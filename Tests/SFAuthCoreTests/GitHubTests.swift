import FoundationEssentials
import Testing

@testable import SFAuthCore

/// GitHub's endpoints, identity and revocation, as its documentation describes them.
struct GitHubTests {
    @Test func githubComHasItsAPIOnItsOwnHost() throws {
        let server = try GitHub.server()
        #expect(server.authorizationEndpoint == "https://github.com/login/oauth/authorize")
        #expect(server.tokenEndpoint == "https://github.com/login/oauth/access_token")
        #expect(server.deviceAuthorizationEndpoint == "https://github.com/login/device/code")
        #expect(server.userinfoEndpoint == "https://api.github.com/user")
        #expect(server.revocationEndpoint == "https://api.github.com/applications")
        #expect(server.issuer == nil)
        #expect(server.flavor == .github)
        try server.validate()
    }

    @Test(arguments: [
        ("ghe.example.com", "https://ghe.example.com"), ("https://ghe.example.com/", "https://ghe.example.com"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ])
    func anEnterpriseServerHasItsAPIUnderAPIv3(host: String, web: String) throws {
        let server = try GitHub.server(host: host)
        #expect(server.authorizationEndpoint == web + "/login/oauth/authorize")
        #expect(server.userinfoEndpoint == web + "/api/v3/user")
        #expect(server.revocationEndpoint == web + "/api/v3/applications")
        #expect(GitHub.applicationsPage(of: server) == web + "/settings/applications")
        try server.validate()
    }

    @Test(arguments: ["http://ghe.example.com", "ghe.example.com/path", "ftp://ghe.example.com", ""])
    func whatIsNotAGitHubHostIsRefused(host: String) {
        #expect(throws: OAuthError.self) { try GitHub.server(host: host) }
    }

    @Test func theUserAPINamesTheUserByIdAndLogin() throws {
        let body = #"{"login":"octocat","id":583231,"name":"The Octocat","email":null}"#
        let identity = try UserIdentity.decode(
            HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Array(body.utf8)), flavor: .github)
        #expect(identity.userId == "583231")
        #expect(identity.username == "octocat")
        #expect(identity.displayName == "The Octocat")
        #expect(identity.email == nil)
    }

    @Test func revocationIsADeleteWithBasicAuthAndAJSONBody() {
        let request = GitHub.revocationRequest(
            accessToken: #"gho_a"b\c"#, endpoint: "https://api.github.com/applications", clientId: "Iv1.abc", clientSecret: "s3")
        #expect(request.method == "DELETE")
        #expect(request.url == "https://api.github.com/applications/Iv1.abc/token")
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == "Basic " + Data("Iv1.abc:s3".utf8).base64EncodedString() })
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"access_token":"gho_a\"b\\c"}"#)
    }

    @Test func tokensWithoutExpiryNeverExpireAtGitHubOnly() throws {
        var credentials = OAuthCredentials(
            identifier: "g", server: try GitHub.server(), clientId: "c", redirectURI: "", accessToken: "t", tokenType: "bearer",
            issuedAt: Date(timeIntervalSince1970: 0))
        #expect(!credentials.isExpired(at: Date(), assumedLifetime: 7200))
        credentials.server.flavor = .standard
        #expect(credentials.isExpired(at: Date(), assumedLifetime: 7200))
    }

    /// Outputs say such a token does not expire — no `expirationTimestamp` for kubectl, no
    /// `password_expiry_utc` for git, `null` in `token --json` — rather than name the year 4001.
    @Test func aTokenThatNeverExpiresIsHandedOutWithoutAnExpiry() throws {
        var credentials = OAuthCredentials(
            identifier: "g", server: try GitHub.server(), clientId: "c", redirectURI: "", accessToken: "t", tokenType: "bearer",
            issuedAt: Date(timeIntervalSince1970: 0))
        #expect(credentials.accessTokenNeverExpires)
        #expect(IssuedToken(credentials, assumedLifetime: 7200).expiry == nil)
        // A GitHub App's token says when it expires: that is its expiry.
        credentials.expiresAt = Date(timeIntervalSince1970: 28_800)
        #expect(!credentials.accessTokenNeverExpires)
        #expect(IssuedToken(credentials, assumedLifetime: 7200).expiry == Date(timeIntervalSince1970: 28_800))
        #expect(Date(timeIntervalSince1970: 28_800).minuteInUTC == "1970-01-01 08:00 UTC")
    }
}

/// RFC 6749 §2.3.1: a client secret in HTTP Basic, when the server wants it there.
struct ClientAuthenticationTests {
    @Test func basicSendsTheEncodedIdAndSecretInTheHeaderAndNeitherInTheBody() {
        var client = ClientConfiguration(clientId: "id:1", clientSecret: "s e/cret")
        client.authentication = .basic
        let request = TokenRequest.refresh(refreshToken: "rt", tokenEndpoint: "https://idp.example/token", client: client)
        let expected = "Basic " + Data("id%3A1:s%20e%2Fcret".utf8).base64EncodedString()
        #expect(request.headers.contains { $0.name == "Authorization" && $0.value == expected })
        #expect(request.bodyText == "grant_type=refresh_token&refresh_token=rt")
    }

    @Test func postSendsTheSecretInTheBody() {
        let client = ClientConfiguration(clientId: "id", clientSecret: "s")
        let request = TokenRequest.refresh(refreshToken: "rt", tokenEndpoint: "https://idp.example/token", client: client)
        #expect(!request.headers.contains { $0.name == "Authorization" })
        #expect(request.bodyText == "grant_type=refresh_token&refresh_token=rt&client_id=id&client_secret=s")
    }

    @Test func onlyInvalidClientSuggestsBasic() {
        func answer(_ body: String) -> HTTPResponse {
            HTTPResponse(status: 400, headers: ["content-type": "application/json"], body: Array(body.utf8))
        }
        #expect(TokenResponse.refusesClientAuthentication(answer(#"{"error":"invalid_client"}"#)))
        #expect(!TokenResponse.refusesClientAuthentication(answer(#"{"error":"invalid_grant"}"#)))
    }
}
