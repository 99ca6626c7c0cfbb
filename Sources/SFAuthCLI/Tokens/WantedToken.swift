import FoundationEssentials
import SFAuth

/// What a command asks of a token beyond its account: a per-call target (`--scope`, `--audience`,
/// `--resource` of an account not bound to it), how to get it (`--exchange`), and how long it must
/// stay valid (`--min-valid`).
package struct WantedToken: Sendable, Equatable {
    /// Scopes, audience, resource; empty for the account's own token.
    package var target = TokenTarget()
    /// Obtain the target by token exchange only.
    package var forceExchange = false
    /// Renew first unless the token stays valid this long.
    package var minimumValidity: TimeInterval?
    /// Renew even if the token looks valid.
    package var forceRefresh = false

    /// What most commands want: the account's own token as it is.
    package init() {}

    /// A wish from the options of a command.
    package init(target: TokenTarget, forceExchange: Bool = false, minimumValidity: TimeInterval? = nil, forceRefresh: Bool = false) {
        self.target = target
        self.forceExchange = forceExchange
        self.minimumValidity = minimumValidity
        self.forceRefresh = forceRefresh
    }

    /// The account's own token, renewed as usual: nothing but `forceRefresh` asked.
    package var isPlain: Bool { target.isEmpty && !forceExchange && minimumValidity == nil }

    /// A `--min-valid` value: a number with a unit (`90s`, `10m`, `1h`, `1d`) or plain seconds, more
    /// more than 0 and at most a week.
    package static func duration(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text)
        var unit = 1.0
        if let last = text.last, let scale = units[last] {
            number = number.dropLast()
            unit = scale
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(number) else { return nil }
        let seconds = value * unit
        return seconds > 0 && seconds <= 7 * 86_400 ? seconds : nil
    }

    /// What to say when `token` does not stay valid as long as asked: the server's tokens do not
    /// live that long. `nil` when it does, or nothing was asked.
    package func shortfall(of token: IssuedToken, now: Date) -> String? {
        guard let minimumValidity, let expiry = token.expiry else { return nil }
        let left = expiry.timeIntervalSince(now)
        guard left < minimumValidity else { return nil }
        return
            "the token stays valid \(Self.words(left)), less than the \(Self.words(minimumValidity)) of --min-valid: its server grants no longer-lived tokens"
    }

    /// `95 s`, `12 min`, `2 h`.
    private static func words(_ seconds: TimeInterval) -> String {
        let whole = max(0, Int(seconds.rounded(.down)))
        if whole < 120 { return "\(whole) s" }
        if whole < 7200 { return "\(whole / 60) min" }
        return "\(whole / 3600) h"
    }
}
