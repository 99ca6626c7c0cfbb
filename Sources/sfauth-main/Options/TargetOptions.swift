import ArgumentParser
import SFAuth
import SFAuthCLI

/// `--scope`, `--audience`, `--exchange` and `--min-valid`: a per-call token from the account's
/// sign-in, and how long it must last (`token`, `exec`, `request`, `kube-credential`).
struct TargetOptions: ParsableArguments {
    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "A token for these scopes only (space-separated; repeatable), from the account's refresh token: never wider than asked.",
            valueName: "scopes"))
    var scopes: [String] = []

    @Option(
        help: ArgumentHelp(
            "A token for this audience, by token exchange (RFC 8693) where the server offers it (Entra: the resource's .default scope).",
            valueName: "audience"))
    var audience: String?

    @Flag(help: "Obtain the --audience, --resource or --scope token by token exchange (RFC 8693) only, not by a refresh.")
    var exchange = false

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp(
            "Renew the token first unless it stays valid this long (90s, 10m, 1h); said on standard error when the server's tokens do not live that long.",
            valueName: "duration"))
    var minValid: String?

    func validate() throws {
        try Self.requireDuration(minValid)
    }

    /// Refuses a `--min-valid` that is no duration (the one check, for every command that takes it).
    static func requireDuration(_ minValid: String?) throws {
        if let minValid, WantedToken.duration(minValid) == nil {
            throw ValidationError("--min-valid takes a duration such as 90s, 10m or 1h (at most 7d), not '\(minValid)'.")
        }
    }

    /// The options as given, for a command line another program runs (`sfauth kubeconfig`).
    var arguments: [String] {
        var arguments: [String] = []
        if !scopes.isEmpty { arguments += ["--scope", scopes.joined(separator: " ")] }
        if let audience { arguments += ["--audience", audience] }
        if exchange { arguments.append("--exchange") }
        if let minValid { arguments += ["--min-valid", minValid] }
        return arguments
    }

    /// What the options ask for, with `resource` (`--resource`) left to the command context to read.
    func wanted(forceRefresh: Bool = false) -> WantedToken {
        let target = TokenTarget(scopes: scopes.isEmpty ? nil : scopes, audience: audience)
        return WantedToken(
            target: target, forceExchange: exchange, minimumValidity: minValid.flatMap(WantedToken.duration), forceRefresh: forceRefresh)
    }
}
