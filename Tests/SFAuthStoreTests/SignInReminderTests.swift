import Foundation
import Glibc
import SFAuthModel
import Testing

@testable import SFAuthStore

/// `sfauth token`'s reminder that a refresh token expires soon: when it is due, what it says, and
/// that it is said once in 24 hours per account.
struct SignInReminderTests {
    let fixture = StoreFixture()
    var settings: EnvironmentSettings { EnvironmentSettings(app: .sfauth, environment: ["SFAUTH_HOME": fixture.path]) }
    let now = StoreFixture.now

    func token(_ user: String, refreshTokenExpiry: RefreshTokenExpiry?, alias: String? = nil) -> IssuedToken {
        var credentials = StoreFixture.account(user, alias: alias)
        credentials.refreshToken = "rt"
        credentials.refreshTokenExpiry = refreshTokenExpiry
        return IssuedToken(credentials, assumedLifetime: 7200)
    }

    func reminder(_ token: IssuedToken, at time: Date) -> String? {
        SignInReminder.line(for: token, settings: settings, app: .sfauth, now: time)
    }

    @Test func itIsSaidOnceADayPerAccount() throws {
        try fixture.store([StoreFixture.account("alice"), StoreFixture.account("bob")])
        let alice = token("alice", refreshTokenExpiry: .at(now.addingTimeInterval(3 * 86_400), lifetime: 15_897_600), alias: "work")
        #expect(
            reminder(alice, at: now)
                == "sfauth: the refresh token of work expires on 2023-11-17 22:13 UTC; run `sfauth login --account work` before then to keep working without a browser"
        )
        #expect(reminder(alice, at: now.addingTimeInterval(60)) == nil)
        #expect(reminder(alice, at: now.addingTimeInterval(86_399)) == nil)
        // Another account has its own marker.
        #expect(
            reminder(token("bob", refreshTokenExpiry: .at(now.addingTimeInterval(86_400), lifetime: 15_897_600)), at: now.addingTimeInterval(60))
                != nil)
        // A day later, again; and the marker is the store's, 0600.
        #expect(reminder(alice, at: now.addingTimeInterval(86_400)) != nil)
        var info = stat()
        #expect(stat(fixture.path + "/reminders/idp.example%2Falice", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600 && info.st_mtim.tv_sec == Int(now.timeIntervalSince1970) + 86_400)
    }

    @Test func onlyAnExpiryWithinSevenDaysIsSaidAndNothingIsTouchedOtherwise() throws {
        try fixture.store([StoreFixture.account("alice")])
        #expect(reminder(token("alice", refreshTokenExpiry: .at(now.addingTimeInterval(7 * 86_400 + 1), lifetime: 15_897_600)), at: now) == nil)
        #expect(reminder(token("alice", refreshTokenExpiry: .noFixedExpiry), at: now) == nil)
        // Keycloak's idle timeout, which every refresh renews, is no deadline to remind of.
        #expect(reminder(token("alice", refreshTokenExpiry: .at(now.addingTimeInterval(1800), lifetime: 1800)), at: now) == nil)
        #expect(reminder(token("alice", refreshTokenExpiry: nil), at: now) == nil)
        #expect(reminder(IssuedToken(SuppliedToken(accessToken: "t", instanceURL: nil)), at: now) == nil)
        #expect(access(fixture.path + "/reminders", F_OK) != 0)
    }

    @Test func anExpiredRefreshTokenIsSaidSoAndNamesQuoted() throws {
        try fixture.store([StoreFixture.account("alice")])
        let line = reminder(token("alice", refreshTokenExpiry: .at(now.addingTimeInterval(-60), lifetime: 15_897_600), alias: "my work"), at: now)
        #expect(
            line
                == "sfauth: the refresh token of my work expired on 2023-11-14 22:12 UTC; run `sfauth login --account 'my work'` to keep working without a browser"
        )
    }

    /// A store it cannot keep the marker in: said every time rather than never.
    @Test func withoutAMarkerItIsSaidEveryTime() throws {
        let alice = token("alice", refreshTokenExpiry: .at(now.addingTimeInterval(86_400), lifetime: 15_897_600))
        #expect(reminder(alice, at: now) != nil)
        #expect(reminder(alice, at: now) != nil)
    }
}
