import SFAuth

/// Small helpers for laying out tables on a terminal.
package extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }

    /// Without leading and trailing spaces and tabs (a header's name and value).
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }

    func trimmingTrailingSpaces() -> String {
        String(self.reversed().drop(while: { $0 == " " }).reversed())
    }
}
