import FoundationEssentials

/// Where the library reads the time and waits: token expiry, ID token and assertion times, the
/// device grant's polling and deadline, and the wait for another process's refresh lock all go
/// through one of these, passed in at init (default: `SystemClock()`), so tests can run those
/// waits without spending real time.
///
/// ```swift
/// let source = TokenSource(store: store, clock: SystemClock())
/// ```
public protocol AuthClock: Sendable {
    /// The time of day, which expiry (`expires_in`, RFC 6749 §5.1), ID token times (`iat`, `exp`)
    /// and JWT assertions are measured against.
    func now() -> Date

    /// A reading of a clock that only moves forward, from an origin that stays fixed for this clock.
    /// Deadlines and timeouts are measured on it, so setting the system time moves none of them.
    func monotonicNow() -> Duration

    /// Waits `duration` (as measured by `monotonicNow()`).
    ///
    /// - Throws: `CancellationError` when the task is cancelled meanwhile.
    func sleep(for duration: Duration) async throws
}

/// The real clocks: `Date()` for the time of day, `ContinuousClock` for deadlines and waits (it keeps
/// counting while the machine sleeps, so a deadline never stretches across a suspend).
public struct SystemClock: AuthClock {
    /// The origin of `monotonicNow()`: shared by every `SystemClock` of the process, so their
    /// readings can be compared.
    private static let origin = ContinuousClock.now

    /// Creates the system clock.
    public init() {}

    public func now() -> Date { Date() }

    public func monotonicNow() -> Duration { Self.origin.duration(to: .now) }

    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}
