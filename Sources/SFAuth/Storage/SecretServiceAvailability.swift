/// Whether the Secret Service keyring can be used right now, as `SecretServiceStore.probe(timeout:)`
/// found it.
public enum SecretServiceAvailability: Sendable, Equatable {
    /// A Secret Service daemon answers on the session bus and its default collection is unlocked.
    case available
    /// The keyring cannot be used now. `reason` says why in a few words, without advice, e.g.
    /// "the keyring is locked" or "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set …)",
    /// so a caller can say "not using the keyring (\(reason)); storing secrets in files".
    case unavailable(reason: String)

    /// `true` for `.available`.
    public var isAvailable: Bool {
        if case .available = self { return true }
        return false
    }
}
