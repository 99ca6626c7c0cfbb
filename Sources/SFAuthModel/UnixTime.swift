import FoundationEssentials

extension Date {
    /// Whole seconds since 1970, rounded down and clamped to what an `Int64` holds: a date read
    /// from a file or a server can be anything, and a conversion that traps is not an answer.
    package var unixSeconds: Int64 {
        let seconds = timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return seconds > 0 ? .max : .min }
        return Int64(exactly: seconds) ?? (seconds > 0 ? .max : .min)
    }
}

extension Date {
    /// The time as RFC 3339 in UTC, to the second: `2026-11-23T23:59:00Z`. Years are clamped to
    /// 0001–9999, so any date (even one read from a damaged file) has a valid text.
    package var rfc3339: String {
        let seconds = min(max(unixSeconds, -62_135_596_800), 253_402_300_799)
        let days = Int64((Double(seconds) / 86_400).rounded(.down))
        let secondOfDay = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText)-\(two(month))-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay % 3600 / 60)):\(two(secondOfDay % 60))Z"
    }
}

extension Date {
    /// The time for people, to the minute in UTC: `2026-11-23 23:59 UTC` (the same clamping as
    /// `rfc3339`; no time zone database is read for it).
    package var minuteInUTC: String {
        let text = rfc3339
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}
