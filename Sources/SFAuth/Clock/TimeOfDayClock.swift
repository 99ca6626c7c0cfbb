import FoundationEssentials

/// The system clock with another time of day: what the older `now:` parameters of `TokenSource`
/// and `OAuthCoordinator` stand for (they only ever set the time of day; waits stay real).
struct TimeOfDayClock: AuthClock {
    let timeOfDay: @Sendable () -> Date
    private let system = SystemClock()

    init(_ timeOfDay: @escaping @Sendable () -> Date) {
        self.timeOfDay = timeOfDay
    }

    func now() -> Date { timeOfDay() }

    func monotonicNow() -> Duration { system.monotonicNow() }

    func sleep(for duration: Duration) async throws { try await system.sleep(for: duration) }
}
