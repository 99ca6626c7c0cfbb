import CredentialProtocols
import Foundation
import SFAuthModel
import Testing

/// git's credential helper format, as `git help credential` defines it.
struct GitCredentialTests {
    @Test func attributesAreReadUpToTheBlankLine() {
        let attributes = GitCredential.Attributes(
            parsing: "protocol=https\nhost=git.example:8443\nwwwauth[]=Basic\nwwwauth[]=Bearer\nno equals\nkey=a=b\n\nafter=blank\n")
        #expect(attributes.pairs.map(\.key) == ["protocol", "host", "wwwauth[]", "wwwauth[]", "key"])
        #expect(attributes["protocol"] == "https")
        #expect(attributes.pairs.filter { $0.key == "wwwauth[]" }.map(\.value) == ["Basic", "Bearer"])
        #expect(attributes["key"] == "a=b")
        #expect(attributes["after"] == nil)
    }

    @Test func aKeySentTwiceIsReadAsGitReadsIt_theLastAndCRLFLinesToo() {
        let attributes = GitCredential.Attributes(parsing: "protocol=https\r\nhost=evil.example\r\nhost=git.example\r\n\r\nhost=after\r\n")
        #expect(attributes["protocol"] == "https")
        #expect(attributes["host"] == "git.example")
    }

    @Test func aHostIsTheServerOfAnAccountSignedInThereOnly() throws {
        func account(_ issuer: String, instance: String? = nil) -> OAuthCredentials {
            var credentials = OAuthCredentials(
                identifier: "x",
                server: AuthorizationServer(
                    authorizationEndpoint: issuer + "/login/oauth/authorize", tokenEndpoint: issuer + "/login/oauth/access_token"),
                clientId: "c", redirectURI: "", accessToken: "t", tokenType: "Bearer", issuedAt: Date())
            credentials.instanceURL = instance
            return credentials
        }
        let gitlab = try GitCredential.Host(parsing: "gitlab.example")
        #expect(gitlab.isServer(of: account("https://gitlab.example")))
        #expect(gitlab.isServer(of: account("https://GITLAB.example:443")))
        #expect(!gitlab.isServer(of: account("https://login.salesforce.com")))
        #expect(!gitlab.isServer(of: account("https://gitlab.example:8443")))
        #expect(!gitlab.isServer(of: account("http://gitlab.example")))
        #expect(
            try GitCredential.Host(parsing: "acme.my.salesforce.com").isServer(
                of: account("https://login.salesforce.com", instance: "https://acme.my.salesforce.com")))
        #expect(try GitCredential.Host(parsing: "http://[::1]:8080").isServer(of: account("http://[::1]:8080")))
    }

    @Test(arguments: [
        ("git.example", "https://git.example"),
        ("https://Git.Example/", "https://git.example"),
        ("git.example:8443", "https://git.example:8443"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:80", "http://[::1]:80"),
        ("http://localhost", "http://localhost"),
    ])
    func hostsAreReadAsGitSendsThem(text: String, url: String) throws {
        #expect(try GitCredential.Host(parsing: text).url == url)
    }

    @Test(arguments: [
        "", "https://", "ssh://git.example", "git.example/path", "user@git.example", "git.example?x", "http://git.example",
        "git example",
    ])
    func whatIsNotAHostIsRefused(text: String) {
        #expect(throws: OAuthError.self) { try GitCredential.Host(parsing: text) }
    }

    @Test func aHostMatchesItsProtocolHostAndPortOnly() throws {
        let host = try GitCredential.Host(parsing: "git.example:8443")
        #expect(host.matches(GitCredential.Attributes(parsing: "protocol=https\nhost=GIT.example:8443\n")))
        #expect(!host.matches(GitCredential.Attributes(parsing: "protocol=https\nhost=git.example\n")))
        #expect(!host.matches(GitCredential.Attributes(parsing: "protocol=http\nhost=git.example:8443\n")))
        #expect(!host.matches(GitCredential.Attributes(parsing: "host=git.example:8443\n")))
    }

    @Test func theAnswerIsThreeLinesWithoutInjectedAttributes() {
        #expect(
            GitCredential.answer(username: "alice", password: "t0k\nen", expiry: Date(timeIntervalSince1970: 1_700_000_000.9))
                == "username=alice\npassword=t0ken\npassword_expiry_utc=1700000000\n")
        #expect(GitCredential.answer(username: "a\r\0b", password: "t", expiry: nil) == "username=ab\npassword=t\n")
        #expect(GitCredential.defaultUsername == "oauth2")
        #expect(GitCredential.quit == "quit=1\n")
    }

    @Test func theHelperValueIsAQuotedShellCommand() {
        #expect(
            GitCredential.helperValue(executable: "/opt/s fauth/bin/sfauth", arguments: ["git-credential", "--account", "it's mine"])
                == #"!'/opt/s fauth/bin/sfauth' 'git-credential' '--account' 'it'\''s mine'"#)
    }
}
