/// The application a sign-in belongs to. Its name decides where the accounts live
/// (`$XDG_DATA_HOME/<name>`), which keyring items are its own, the names of its lock files and
/// discovery cache, and the product named on the browser's result page — so two tools that embed
/// SFAuth never see each other's accounts or secrets. `sfauth` is simply the app named "sfauth".
public struct AppIdentity: Sendable, Equatable, Hashable {
    /// A short, file-name-safe name: `acme`. Lowercase ASCII letters, digits, `-`, `_` and `.`.
    public let name: String
    /// The name people read on the result page and in messages: `Acme CLI`. Default: `name`.
    public let displayName: String

    /// Names an application.
    ///
    /// - Precondition: `name` is 1–64 characters of `a-z`, `0-9`, `-`, `_`, `.`, and does not
    ///   start with `.` (it becomes a directory name and a keyring attribute).
    public init(name: String, displayName: String? = nil) {
        precondition(Self.isValidName(name), "AppIdentity name '\(name)' must be 1-64 of a-z 0-9 - _ . and not start with '.'")
        self.name = name
        self.displayName = displayName ?? name
    }

    /// sfauth itself.
    public static let sfauth = AppIdentity(name: "sfauth")

    /// The prefix of the application's environment variables (`EnvironmentSettings`): its name in
    /// capitals, with `-` and `.` as `_` — `SFAUTH` for sfauth, `ACME` for acme.
    public var environmentPrefix: String {
        String(name.uppercased().map { $0 == "-" || $0 == "." ? "_" : $0 })
    }

    /// The full name of one of the application's environment variables: `variable("HOME")` is
    /// `SFAUTH_HOME` for sfauth.
    public func variable(_ setting: String) -> String {
        environmentPrefix + "_" + setting
    }

    /// Whether `name` can name an application (see `init(name:displayName:)`).
    public static func isValidName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), name.first != "." else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }
}
