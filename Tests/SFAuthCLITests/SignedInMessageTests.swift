import FoundationEssentials
import SFAuth
import Testing

@testable import SFAuthCLI

/// What `sfauth login` says after a sign-in: the account, and what the server withheld.
@Suite struct SignedInMessageTests {
    static func credentials(username: String? = "alice", userId: String? = "u-1", granted: [String]) -> OAuthCredentials {
        let server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
            issuer: "https://idp.example")
        var credentials = OAuthCredentials(
            identifier: "idp.example/u-1", server: server, clientId: "cli", redirectURI: "http://127.0.0.1:1/cb",
            accessToken: "a", tokenType: "Bearer", issuedAt: Date(timeIntervalSince1970: 0))
        credentials.username = username
        credentials.userId = userId
        credentials.scopes = granted
        return credentials
    }

    @Test func allThatWasAskedWasGranted() {
        #expect(
            SignedInMessage.lines(for: Self.credentials(granted: ["openid", "profile"]), requestedScopes: ["openid", "profile"])
                == ["Signed in as alice at idp.example (account idp.example/u-1)."])
    }

    @Test func theScopesTheServerWithheldAreNamed() {
        let lines = SignedInMessage.lines(for: Self.credentials(username: nil, granted: ["openid"]), requestedScopes: ["openid", "profile", "email"])
        #expect(
            lines == [
                "Signed in as user u-1 at idp.example (account idp.example/u-1); the server gave no name.",
                "The server did not grant the scopes profile email: approve them on the consent page (sign in again with --param prompt=consent to see it), or ask its administrator.",
            ])
    }

    @Test func profileIsSuggestedOnlyWhenItWasNotAskedFor() {
        let lines = SignedInMessage.lines(for: Self.credentials(username: nil, granted: ["openid"]), requestedScopes: ["openid"])
        #expect(
            lines == [
                "Signed in as user u-1 at idp.example (account idp.example/u-1); the server gave no name — ask for a scope such as `profile` (--scope) to see one."
            ])
    }
}
