/// Text from outside (a server's `error_description`, a user's name, a device `user_code`) made safe
/// to show on a terminal: control characters, which could move the cursor, retitle the window or
/// hide text (ESC, BEL, CR, the C1 range), and the bidirectional formatting characters, which can
/// make text read differently from what it is (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
/// U+061C), are written as visible escapes such as `\u{1B}`.
public enum TerminalText {
    /// `text` with every control and bidi formatting character escaped as `\u{XX}`; a backslash
    /// stays as it is. Newlines are escaped too unless `keepingNewlines` (a line from outside must
    /// not pretend to be two).
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines: keepingNewlines) }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if needsEscape(scalar, keepingNewlines: keepingNewlines) {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `scalar` must not reach a terminal as it is (newlines and tabs excepted).
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value != 0x0A && needsEscape(scalar, keepingNewlines: false)
    }

    static func needsEscape(_ scalar: Unicode.Scalar, keepingNewlines: Bool) -> Bool {
        switch scalar.value {
        case 0x0A: return !keepingNewlines
        case 0x09: return false  // a tab moves the cursor only forwards, within the line
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
