#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Date {
    /// Whole seconds since 1970, rounded down and clamped to what an `Int64` holds: a date read
    /// from a file or a server can be anything, and a conversion that traps is not an answer.
    public var unixSeconds: Int64 {
        let seconds = timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return seconds > 0 ? .max : .min }
        return Int64(exactly: seconds) ?? (seconds > 0 ? .max : .min)
    }
}
