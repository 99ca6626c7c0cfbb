import Foundation
import SFAuth
import Synchronization

/// An `AuthClock` that spends no real time: it stands still until something sleeps, and a sleep
/// returns at once, having moved the clock on by what it asked for. It records every sleep, and
/// `onSleep` lets a test act while a wait is in progress (cancel the flow, or hold the sleeper until
/// the test is ready).
final class TestClock: AuthClock {
    private struct State {
        var timeOfDay: Date
        var elapsed = Duration.zero
        var sleeps: [Duration] = []
        var onSleep: (@Sendable (Duration) async -> Void)?
    }

    private let state: Mutex<State>

    /// Starts at `now` (time of day) with nothing elapsed.
    init(now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        state = Mutex(State(timeOfDay: now))
    }

    func now() -> Date { state.withLock { $0.timeOfDay } }

    func monotonicNow() -> Duration { state.withLock { $0.elapsed } }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let onSleep = state.withLock { state in
            state.sleeps.append(duration)
            Self.advance(&state, by: duration)
            return state.onSleep
        }
        await onSleep?(duration)
        // A real sleep lets other tasks run; so does this one, without the wait.
        await Task.yield()
        try Task.checkCancellation()
    }

    /// Moves the clock on by `duration` without anyone sleeping.
    func advance(by duration: Duration) {
        state.withLock { Self.advance(&$0, by: duration) }
    }

    /// Every sleep so far, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Runs `body` inside every later sleep, after the clock has moved on and before the sleep returns.
    func onSleep(_ body: @escaping @Sendable (Duration) async -> Void) {
        state.withLock { $0.onSleep = body }
    }

    private static func advance(_ state: inout State, by duration: Duration) {
        state.elapsed += duration
        state.timeOfDay += duration.timeInterval
    }
}

extension Duration {
    /// The duration in seconds, as `Date` arithmetic takes it.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
