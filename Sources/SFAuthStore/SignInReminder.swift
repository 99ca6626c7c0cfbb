import FoundationEssentials
import Glibc
import SFAuthModel

/// `sfauth token`'s reminder that an account's refresh token is about to expire — after which only
/// a sign-in at a browser helps — said on standard error at most once every 24 hours per account,
/// by both programs alike.
///
/// The last reminder is remembered by the modification time of a marker, `reminders/<percent-encoded
/// identifier>` in the store. Nothing is looked at on disk unless the token's recorded refresh
/// token expiry is within `RefreshTokenExpiry.reminderWindow` (7 days): the front end's hot path
/// stays one file read. When the marker cannot be kept (a read-only store), the reminder is said
/// every time rather than never; it never fails the command.
package enum SignInReminder {
    /// The store's subdirectory of markers.
    package static let directory = "reminders"
    /// How long after a reminder the next one waits: 24 hours.
    package static let interval: TimeInterval = 86_400

    /// The line to say now for `token` (without a newline), or `nil`; when there is one, the
    /// account's marker is set to `now`.
    ///
    /// - Parameters:
    ///   - token: the token being handed out; only a stored account's has a refresh token expiry.
    ///   - settings: where the store is (`<PREFIX>_HOME`, XDG).
    ///   - app: the application, whose name the line says.
    ///   - now: the time the expiry and the marker are judged at.
    package static func line(for token: IssuedToken, settings: EnvironmentSettings, app: AppIdentity, now: Date) -> String? {
        guard let expiry = token.refreshTokenExpiry?.date, token.refreshTokenExpiry?.isDue(at: now) == true,
            let identifier = token.account
        else { return nil }
        guard isDue(identifier, settings: settings, app: app, now: now) else { return nil }
        return message(app: app, account: token.accountName ?? identifier, expiry: expiry, now: now)
    }

    /// The reminder for `account` (the name that selects it) whose refresh token expires at `expiry`:
    /// "sfauth: the refresh token of work expires on 2026-07-01 09:30 UTC; run `sfauth login
    /// --account work` before then to keep working without a browser" (the command quoted as
    /// sfauth's other messages quote commands).
    package static func message(app: AppIdentity, account: String, expiry: Date, now: Date) -> String {
        let command = "\(app.name) login --account \(shellWord(account))"
        let name = TerminalText.escaped(account)
        if expiry <= now {
            return
                "\(app.name): the refresh token of \(name) expired on \(expiry.minuteInUTC); run `\(TerminalText.escaped(command))` to keep working without a browser"
        }
        return
            "\(app.name): the refresh token of \(name) expires on \(expiry.minuteInUTC); run `\(TerminalText.escaped(command))` before then to keep working without a browser"
    }

    /// Whether the account's last reminder is 24 hours old or more (or there was none, or its
    /// marker lies in the future: the clock was set back) — and if so, the marker says `now`.
    private static func isDue(_ identifier: String, settings: EnvironmentSettings, app: AppIdentity, now: Date) -> Bool {
        guard let path = try? settings.credentialsDirectory(app: app), let store = try? StoreDirectory.open(path),
            let markers = try? store.privateSubdirectory(directory)
        else { return true }
        let name = FormURLEncoding.encode(identifier)
        if let last = markers.modificationTime(of: name) {
            let elapsed = now.timeIntervalSince1970 - (Double(last.tv_sec) + Double(last.tv_nsec) / 1e9)
            if (0..<interval).contains(elapsed) { return false }
        }
        let seconds = now.timeIntervalSince1970.rounded(.down)
        try? markers.touch(name, at: timespec(tv_sec: Int(seconds), tv_nsec: 0))
        return true
    }

    /// `name` as a shell word, the way sfauth's messages quote account names: as it is when plain,
    /// else in single quotes.
    private static func shellWord(_ name: String) -> String {
        name.allSatisfy { $0.isLetter || $0.isNumber || "-_.@:/".contains($0) } ? name : "'\(name)'"
    }
}
