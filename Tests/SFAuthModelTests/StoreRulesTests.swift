import FoundationEssentials
import Testing

@testable import SFAuthModel

/// The rules the store and the front end share: file format, directory trust, environment settings,
/// token freshness.
struct StoreRulesTests {
    private static let server = AuthorizationServer(authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t")

    private static func credentials(expiresIn: TimeInterval?, issuedAgo: TimeInterval = 0, now: Date) -> OAuthCredentials {
        var credentials = OAuthCredentials(
            identifier: "idp.example/u", server: server, clientId: "c", redirectURI: "",
            accessToken: "at", tokenType: "Bearer", issuedAt: now.addingTimeInterval(-issuedAgo))
        credentials.expiresAt = expiresIn.map { now.addingTimeInterval($0) }
        return credentials
    }

    @Test func theFileFormatRoundTrips() throws {
        var credentials = Self.credentials(expiresIn: 3600, now: Date(timeIntervalSince1970: 1_700_000_000))
        credentials.refreshToken = "rt"
        credentials.alias = "work"
        let bytes = CredentialFile.encode(credentials)
        #expect(bytes.last == UInt8(ascii: "\n"))
        var expected = credentials
        expected.refreshTokenInSecretStore = false  // a refresh token in the file is placed there
        #expect(try CredentialFile.decode(bytes) == expected)
        #expect(CredentialFile.fileName(for: "idp.example/u") == "idp.example%2Fu.json")
        #expect(CredentialFile.identifier(fromFileName: "idp.example%2Fu.json") == "idp.example/u")
        #expect(CredentialFile.identifier(fromFileName: ".idp.example%2Fu.json.123.tmp") == nil)
        #expect(CredentialFile.defaultIdentifier(in: Array("idp.example/u\nrest".utf8)) == "idp.example/u")
        #expect(CredentialFile.defaultIdentifier(in: Array("\n".utf8)) == nil)
    }

    @Test func unreadableFilesSayWhy() {
        #expect(throws: CredentialFile.Unreadable(reason: "not JSON")) { try CredentialFile.decode(Array("{".utf8)) }
        #expect(throws: CredentialFile.Unreadable(reason: "missing 'accessToken'")) {
            try CredentialFile.decode(
                Array(
                    #"{"identifier":"x","clientId":"c","redirectURI":"","tokenType":"Bearer","issuedAt":0,"scopes":[],"server":{"authorizationEndpoint":"a","tokenEndpoint":"t","flavor":"standard"}}"#
                        .utf8))
        }
    }

    @Test(
        arguments: [
            (0o040700, 1000, nil),
            (0o040755, 1000, nil),
            (0o120777, 1000, DirectoryTrust.Problem.symbolicLink),
            (0o100600, 1000, .notDirectory),
            (0o040700, 0, .ownedByAnotherUser(owner: 0, user: 1000)),
            (0o040770, 1000, .writableByOthers(mode: 0o770)),
            (0o040702, 1000, .writableByOthers(mode: 0o702)),
        ] as [(UInt32, UInt32, DirectoryTrust.Problem?)])
    func directoryTrust(mode: UInt32, owner: UInt32, problem: DirectoryTrust.Problem?) {
        #expect(DirectoryTrust.problem(mode: mode, owner: owner, user: 1000) == problem)
    }

    @Test func settingsAreReadWhenAskedAndOnlyMalformedOnesThrow() throws {
        let settings = EnvironmentSettings(
            prefix: "ACME",
            environment: [
                "ACME_TOKEN_LEEWAY": "soon", "ACME_STORAGE": "", "ACME_HTTP_TIMEOUT": "2.5", "ACME_ACCESS_TOKEN": "t",
                "SFAUTH_ASSUMED_TOKEN_LIFETIME": "5",
            ])
        // Unset and empty settings are nil, not errors (a `try?` would confuse the two).
        #expect(try settings.storageMode() == .auto)
        #expect(try settings.assumedTokenLifetime() == nil)  // another tool's variable is not read
        #expect(try settings.httpTimeout() == 2.5)
        #expect(settings.suppliedToken == SuppliedToken(accessToken: "t", instanceURL: nil))
        #expect(settings.clientSecret == nil)
        let error = #expect(throws: OAuthError.self) { try settings.tokenLeeway() }
        #expect(error?.description.contains("ACME_TOKEN_LEEWAY must be a number of seconds") == true)
        #expect(throws: OAuthError.self) { try TokenFreshness(settings: settings) }
        #expect(settings.secretVariables == ["ACME_CLIENT_SECRET", "ACME_ACCESS_TOKEN"])
    }

    @Test func freshnessHonoursLeewayLifetimeAndStatus() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let rule = TokenFreshness()
        #expect(rule.isUsable(Self.credentials(expiresIn: 3600, now: now), at: now))
        #expect(!rule.isUsable(Self.credentials(expiresIn: 30, issuedAgo: 3570, now: now), at: now))  // within 60 s
        // A 5-second token is usable for its first half, not treated as expired on arrival.
        #expect(rule.isUsable(Self.credentials(expiresIn: 5, now: now), at: now))
        // No stated expiry: issuedAt + the assumed lifetime (7200 s by default).
        #expect(rule.isUsable(Self.credentials(expiresIn: nil, issuedAgo: 7000, now: now), at: now))
        #expect(!rule.isUsable(Self.credentials(expiresIn: nil, issuedAgo: 7150, now: now), at: now))
        var rejected = Self.credentials(expiresIn: 3600, now: now)
        rejected.status = .loginRequired
        #expect(!rule.isUsable(rejected, at: now))
    }

    @Test func salesforceRefusalsAreAdvisedInTheProgramsWords() {
        let error = OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_client_id"))
        #expect(error.remedy == .answerSalesforceRefusal(.unknownClientId))
        #expect(error.description.hasSuffix("check the client id."))
        #expect(
            error.description(advising: { _ in "Check --client-id." })
                == "The token endpoint refused the request: invalid_client_id. Check --client-id.")
        #expect(OAuthError.tokenRequestRejected(OAuthServerError(code: "invalid_grant")).remedy == nil)
    }

    @Test func appNamesAreFileAndKeyringSafe() {
        #expect(AppIdentity.isValidName("acme"))
        #expect(AppIdentity.isValidName("my-tool_2.0"))
        for bad in ["", ".hidden", "Acme", "a/b", "a b", String(repeating: "a", count: 65)] {
            #expect(!AppIdentity.isValidName(bad), "\(bad)")
        }
        #expect(AppIdentity(name: "acme").displayName == "acme")
    }
}
