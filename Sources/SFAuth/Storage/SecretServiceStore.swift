import CSecret
import SFAuthCore

/// A `SecretStore` in the desktop keyring, through the freedesktop.org Secret Service API that
/// gnome-keyring, KWallet and KeePassXC speak over D-Bus (by way of libsecret).
///
/// Each secret is one item in the service's default collection (gnome-keyring's "login"), of the
/// application's own schema (`schemaName(for:)`: `io.sfauth.Credentials` for sfauth,
/// `io.sfauth.app.<name>.Credentials` for another app) with the attributes `account` (the account
/// identifier) and `kind` (e.g. `refresh_token`), labelled e.g. "acme refresh token for <account>".
/// Items of other schemas are never read, replaced or deleted, even with the same attributes — so
/// two tools that embed SFAuth never see each other's secrets.
///
/// libsecret is not linked: the first call in a process loads it with `dlopen("libsecret-1.so.0")`
/// (and with it GLib and D-Bus), so programs that never touch the keyring never pay for it.
/// Measured here (gnome-keyring 42): the first lookup in a process costs 10–14 ms (loading ~1.3 ms,
/// connecting, opening an encrypted session), later ones ~1.5 ms; a whole process doing one
/// lookup ~11 ms. So keep it off the cached-token path: ask the keyring only to refresh.
///
/// Every call runs on a thread of its own and gives up after `timeout`, so a wedged daemon cannot
/// hang the caller; it blocks the calling thread for at most `timeout` (plus 0.2 s for libsecret to
/// unwind a cancelled call). The keyring is never asked to unlock (no password prompt): a locked
/// collection is reported as an error, never as "no secret stored". Errors are
/// `OAuthError.storage` with one line saying what is wrong and what to do: no D-Bus session bus, no
/// Secret Service daemon, a locked keyring, libsecret not installed, or no answer in time.
///
/// Thread-safe: calls may run concurrently from any thread.
public struct SecretServiceStore: SecretStore {
    /// The libsecret schema name of sfauth's items (their `xdg:schema` attribute).
    public static let schemaName = "io.sfauth.Credentials"

    /// The schema name of `app`'s items: `io.sfauth.Credentials` for sfauth (as it always was),
    /// `io.sfauth.app.<name>.Credentials` for any other.
    public static func schemaName(for app: AppIdentity) -> String {
        app == .sfauth ? schemaName : "io.sfauth.app.\(app.name).Credentials"
    }

    /// The longest one call waits for the keyring before giving up. Default: 3 seconds.
    public let timeout: Duration
    /// The schema name items are stored and looked up under.
    package let schema: String
    /// The name at the start of item labels.
    package let labelPrefix: String
    /// The shared-library names tried, in order, by the first call of the process.
    package let libraryNames: [String]

    /// Creates the store of `app`'s secrets. Loads and connects nothing: the first call does.
    ///
    /// - Parameters:
    ///   - app: whose secrets: they are kept under its own schema (`schemaName(for:)`).
    ///   - timeout: the longest one call waits for the keyring. Default: 3 seconds.
    public init(app: AppIdentity = .sfauth, timeout: Duration = .seconds(3)) {
        self.init(timeout: timeout, schemaName: Self.schemaName(for: app), labelPrefix: app.displayName)
    }

    /// Creates a store with another schema name or library names (for tests).
    package init(
        timeout: Duration, schemaName: String, labelPrefix: String = "sfauth",
        libraryNames: [String] = ["libsecret-1.so.0"]
    ) {
        self.timeout = timeout
        self.schema = schemaName
        self.labelPrefix = labelPrefix
        self.libraryNames = libraryNames
    }

    /// "the Secret Service keyring".
    public var displayName: String { "the Secret Service keyring" }

    /// The keyring item and the command that removes it: `secret-tool clear xdg:schema … account … kind …`.
    public func itemDescription(account: String, kind: String) -> String {
        let words = ["secret-tool", "clear", "xdg:schema", schema, "account", account, "kind", kind].map { word in
            word.allSatisfy { $0.isLetter || $0.isNumber || "-_.:/@".contains($0) } ? word : "'" + word.replacing("'", with: "'\\''") + "'"
        }
        return "\(displayName) (`\(words.joined(separator: " "))` removes it)"
    }

    /// The secret of `kind` for `account`, or `nil` when none is stored.
    ///
    /// - Throws: `OAuthError.storage` when the keyring cannot answer: no session bus, no daemon,
    ///   the default collection (or the item) locked, libsecret missing, or no answer in time.
    public func secret(account: String, kind: String) throws(OAuthError) -> String? {
        try Self.validate(account: account, kind: kind)
        let call = SecretServiceCall(store: self)
        var found: UnsafeMutablePointer<CChar>?
        defer { sfsecret_free_secret(found) }
        try call.run { options, milliseconds, result in
            sfsecret_lookup(options, account, kind, milliseconds, &found, result)
        }
        return found.map { String(cString: $0) }
    }

    /// Stores `value` as the secret of `kind` for `account` in the default collection, replacing
    /// the one stored before.
    ///
    /// - Throws: `OAuthError.storage` as for `secret(account:kind:)`, and when the service has no
    ///   default collection.
    public func setSecret(_ value: String, account: String, kind: String) throws(OAuthError) {
        try Self.validate(account: account, kind: kind)
        guard !value.utf8.contains(0) else {
            throw .storage("a secret for the keyring must not contain a NUL character")
        }
        let label = label(account: account, kind: kind)
        let call = SecretServiceCall(store: self)
        try call.run { options, milliseconds, result in
            sfsecret_store(options, account, kind, label, value, milliseconds, result)
        }
    }

    /// Deletes the secret of `kind` for `account`; no error when there was none.
    ///
    /// - Throws: `OAuthError.storage` as for `secret(account:kind:)` — including a locked keyring,
    ///   where it cannot tell whether a secret is left behind.
    public func deleteSecret(account: String, kind: String) throws(OAuthError) {
        try Self.validate(account: account, kind: kind)
        let call = SecretServiceCall(store: self)
        try call.run { options, milliseconds, result in
            sfsecret_delete(options, account, kind, milliseconds, result)
        }
    }

    /// Whether the keyring can be used now: a session bus, a Secret Service daemon on it, and an
    /// unlocked default collection. Meant for `--storage auto`.
    ///
    /// Answers at once, without loading libsecret, when no session bus is configured
    /// (`DBUS_SESSION_BUS_ADDRESS` unset and no `$XDG_RUNTIME_DIR/bus`); otherwise costs about
    /// what a first lookup does (~10 ms), and never more than `timeout` (+0.2 s).
    ///
    /// - Parameter timeout: the longest it waits for the daemon. Default: 1 second.
    public static func probe(timeout: Duration = .seconds(1)) -> SecretServiceAvailability {
        SecretServiceStore(timeout: timeout).availability()
    }

    /// `probe(timeout:)` with this store's timeout, schema and library names.
    package func availability() -> SecretServiceAvailability {
        let failure = SecretServiceCall(store: self).outcome { options, milliseconds, result in
            sfsecret_probe(options, milliseconds, result)
        }
        guard let failure else { return .available }
        return .unavailable(reason: failure.problem)
    }

    /// The item label shown in keyring managers, e.g. "sfauth refresh token for <account>".
    package func label(account: String, kind: String) -> String {
        "\(labelPrefix) \(String(kind.map { $0 == "_" ? " " : $0 })) for \(account)"
    }

    private static func validate(account: String, kind: String) throws(OAuthError) {
        guard !account.isEmpty, !kind.isEmpty else {
            throw .storage("a keyring item needs a non-empty account and kind")
        }
        guard !account.utf8.contains(0), !kind.utf8.contains(0) else {
            throw .storage("a keyring account or kind must not contain a NUL character")
        }
    }
}
