import Foundation
import Glibc
import SFAuthModel
import Testing

@testable import SFAuthStore

/// The one stored-token lookup, case by case: what it hands out, and why it hands over.
struct StoredTokenLookupTests {
    let fixture = StoreFixture()

    func lookUp(_ name: String? = nil, _ environment: [String: String] = [:]) -> StoredTokenLookup.Outcome {
        let settings = EnvironmentSettings(app: .sfauth, environment: ["SFAUTH_HOME": fixture.path].merging(environment) { $1 })
        return StoredTokenLookup.lookUp(account: name, settings: settings, app: .sfauth, now: StoreFixture.now)
    }

    func usable(_ credentials: OAuthCredentials) -> StoredTokenLookup.Outcome {
        .usable(IssuedToken(credentials, assumedLifetime: TokenFreshness.defaultAssumedLifetime))
    }

    @Test func theDefaultOrANamedAccountsUsableToken() throws {
        let alice = StoreFixture.account("alice", alias: "work")
        let bob = StoreFixture.account("bob")
        try fixture.store([alice, bob])
        #expect(lookUp() == usable(alice))
        #expect(lookUp("bob") == usable(bob))
        #expect(lookUp("idp.example/bob") == usable(bob))
        #expect(lookUp("work") == usable(alice))
        #expect(
            lookUp("work", ["SFAUTH_ACCESS_TOKEN": "supplied", "SFAUTH_INSTANCE_URL": "https://i"])
                == .usable(IssuedToken(SuppliedToken(accessToken: "supplied", instanceURL: "https://i"))))
    }

    @Test(arguments: [
        "SFAUTH_STORAGE": "cloud", "SFAUTH_HOME": "relative", "SFAUTH_HTTP_TIMEOUT": "0",
        "SFAUTH_TOKEN_LEEWAY": "soon", "SFAUTH_ASSUMED_TOKEN_LIFETIME": "-1",
    ])
    func aSettingTheMainProgramRefusesIsItsToReport(name: String, value: String) throws {
        try fixture.store([StoreFixture.account("alice")])
        #expect(lookUp(nil, [name: value]) == .notFound(.refusedSetting))
    }

    @Test func whateverIsNotAUsableTokenIsTheMainProgramsToAnswer() throws {
        #expect(lookUp() == .notFound(.noStore))
        try fixture.store([
            StoreFixture.account("alice", email: "shared"), StoreFixture.account("bob", email: "shared"),
            StoreFixture.account("carol", expiresIn: -60),
        ])
        #expect(lookUp("nobody") == .notFound(.noAccountNamed))
        #expect(lookUp("shared") == .notFound(.severalAccountsNamed))
        #expect(lookUp("carol") == .notFound(.notUsable(identifier: "idp.example/carol")))
        var rejected = StoreFixture.account("alice", email: "shared")
        rejected.status = .loginRequired
        try fixture.reopen().write(rejected)  // (the reopened store's writes keep the index too)
        #expect(lookUp() == .notFound(.notUsable(identifier: "idp.example/alice")))
        try fixture.writeBehindTheStoresBack(StoreFixture.account("dave"))
        #expect(lookUp("dave") == .notFound(.indexCannotTell))
        try Data("{ damaged".utf8).write(to: URL(fileURLWithPath: fixture.path + "/accounts/idp.example%2Fbob.json"))
        #expect(lookUp("idp.example/bob") == .notFound(.unreadable))
        unlink(fixture.path + "/default")
        #expect(lookUp() == .notFound(.noDefault))
        chmod(fixture.path, 0o770)
        #expect(lookUp("idp.example/alice") == .notFound(.untrustedStore))
    }
}
