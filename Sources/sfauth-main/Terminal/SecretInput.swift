import FoundationEssentials
import Glibc
import SFAuth
import SFAuthCLI

/// Reads secrets the way a careful CLI does: from the terminal without echo, or from standard input —
/// never from the command line, where `ps` and shell history see them. (A client secret comes from a
/// file or the environment: `SignInInputs`.)
enum SecretInput {
    /// The password for the password grant: typed at the terminal without echo when standard input is
    /// one, else the first line of standard input (`printf %s "$PW" | sfauth login --password ...`).
    static func password(prompt: String) throws(OAuthError) -> String {
        let value: String?
        if isatty(0) == 1 {
            value = readLineWithoutEcho(prompt: prompt)
            StandardError.write("\n")
        } else {
            value = readLine(strippingNewline: true)
        }
        guard let value, !value.isEmpty else {
            throw .configuration("no password given: type it at the prompt, or pipe it on standard input")
        }
        return value
    }

    /// Shows `prompt`, then reads one line from standard input with the terminal's echo off, restored
    /// afterwards. Echo goes off before the prompt appears: whatever is typed once it is shown is
    /// neither echoed nor lost (only what was typed before it is discarded, as sudo and ssh do). (Ctrl-C
    /// at the prompt ends the process before the restore; interactive shells reset the terminal's modes
    /// for a job killed by a signal.)
    private static func readLineWithoutEcho(prompt: String) -> String? {
        var original = termios()
        guard tcgetattr(0, &original) == 0 else {
            StandardError.write(prompt)
            return readLine(strippingNewline: true)
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        tcsetattr(0, TCSAFLUSH, &silent)
        defer { tcsetattr(0, TCSANOW, &original) }
        StandardError.write(prompt)
        return readLine(strippingNewline: true)
    }
}
