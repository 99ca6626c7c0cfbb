/// Splits a `--browser-command` string into arguments the way a POSIX shell would for simple
/// commands: blanks separate words; `'…'` keeps everything literally; `"…"` keeps everything but
/// lets a backslash escape `\ " $ `` ` and newline; outside quotes a backslash escapes any
/// character. Nothing is expanded (no variables, globs, `~` or command substitution).
///
/// `"/opt/My Browser/browser" --new-window '%s'` gives
/// `["/opt/My Browser/browser", "--new-window", "%s"]`.
///
/// - Throws: `BrowserLaunchError` for an unterminated quote or a trailing backslash.
public func splitCommandLine(_ string: String) throws -> [String] {
    enum Quote { case none, single, double }
    var words: [String] = []
    var word = ""
    var inWord = false
    var quote = Quote.none
    var characters = string.makeIterator()
    while let character = characters.next() {
        switch quote {
        case .single:
            if character == "'" { quote = .none } else { word.append(character) }
        case .double:
            switch character {
            case "\"":
                quote = .none
            case "\\":
                guard let next = characters.next() else {
                    throw BrowserLaunchError(message: "unterminated double quote in '\(string)'")
                }
                if next == "\n" { break }  // line continuation
                if !"\\\"$`".contains(next) { word.append("\\") }
                word.append(next)
            default:
                word.append(character)
            }
        case .none:
            switch character {
            case " ", "\t", "\n":
                if inWord {
                    words.append(word)
                    word = ""
                    inWord = false
                }
            case "'":
                quote = .single
                inWord = true
            case "\"":
                quote = .double
                inWord = true
            case "\\":
                guard let next = characters.next() else {
                    throw BrowserLaunchError(message: "trailing backslash in '\(string)'")
                }
                inWord = true
                if next != "\n" { word.append(next) }
            default:
                word.append(character)
                inWord = true
            }
        }
    }
    switch quote {
    case .none: break
    case .single: throw BrowserLaunchError(message: "unterminated single quote in '\(string)'")
    case .double: throw BrowserLaunchError(message: "unterminated double quote in '\(string)'")
    }
    if inWord { words.append(word) }
    return words
}
