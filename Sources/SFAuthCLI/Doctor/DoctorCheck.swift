import SFAuth

/// One line of `sfauth doctor`: what was checked, the verdict, and what to do.
package struct DoctorCheck: Sendable, Equatable {
    /// The verdict.
    package enum Verdict: String, Sendable {
        /// Fine.
        case ok
        /// Changes how a sign-in goes, but does not stop it.
        case note
        /// Would stop a sign-in.
        case problem = "PROBLEM"
    }

    /// The check's name: `display`, `browser`, `ssh`, `keyring`, `store`, `port`, `proxy`, `clock`;
    /// with a server named (`ServerMetadataReview`): `config`, `metadata`, `issuer`, `http`,
    /// `endpoint`, `pkce`, `revoke`, `iss`, `refresh`, `device`.
    package var name: String
    /// The verdict.
    package var verdict: Verdict
    /// What was found, with the fix.
    package var text: String

    /// Creates a check.
    package init(_ name: String, _ verdict: Verdict, _ text: String) {
        self.name = name
        self.verdict = verdict
        self.text = text
    }

    /// The line as printed: verdict, name, text.
    package var line: String {
        "\(verdict.rawValue.padding(toLength: 7)) \(name.padding(toLength: 8)) \(text.terminalSafe)"
    }

    /// The most a clock may be off before tokens and assertions are refused.
    package static let tolerableClockOffset: Double = 60

    /// The verdicts on `facts`, one per check, in the order they are printed: the server's lines
    /// (when `facts.server` is set) before the clock, which is compared with that same server.
    package static func checks(_ facts: DoctorFacts) -> [DoctorCheck] {
        var checks = [display(facts), browser(facts)]
        if facts.session.isSSH {
            let client = facts.session.kind.sshClientAddress ?? "?"
            checks.append(
                DoctorCheck(
                    "ssh", .note,
                    "connected over SSH from \(client): a browser there reaches this login through `ssh -L PORT:localhost:PORT`, or paste the address back"
                ))
        }
        checks += [keyring(facts.keyring), store(facts.store), port(facts.port), proxy(facts)]
        if let server = facts.server { checks += ServerMetadataReview.checks(server) }
        switch facts.server {
        case .unresolved?, .metadata(_, _, .unreachable)?:
            break  // a server line already says there is no server to compare clocks with, or why it cannot be reached
        default:
            checks.append(clock(facts.clock))
        }
        return checks
    }

    private static func display(_ facts: DoctorFacts) -> DoctorCheck {
        if let display = facts.session.kind.display {
            guard facts.displayAnswers != false else {
                return DoctorCheck(
                    "display", .problem,
                    "\(display) is set, but nothing answers there: a browser cannot open on it; start the display, or unset the variable to get the URL printed"
                )
            }
            return DoctorCheck("display", .ok, "a display is available (\(display))")
        }
        if facts.session.isWSL {
            return DoctorCheck(
                "display", .note, "WSL: the Windows browser opens through $BROWSER or wslview; if none does, open the printed URL yourself")
        }
        return DoctorCheck(
            "display", .note,
            "no display (DISPLAY and WAYLAND_DISPLAY are unset): sign-in prints the URL; paste the address back, forward the port, or use --device")
    }

    private static func browser(_ facts: DoctorFacts) -> DoctorCheck {
        if let browser = facts.session.browserVariable {
            guard facts.browserFound != false else {
                return DoctorCheck("browser", .problem, "$BROWSER is \(browser), which cannot be found: fix it, or unset it")
            }
            return DoctorCheck("browser", .ok, "$BROWSER is \(browser)\(facts.opener == nil ? " (xdg-open is not installed)" : "")")
        }
        if let opener = facts.opener {
            let display = facts.session.hasDisplay
            return DoctorCheck("browser", display ? .ok : .note, "\(opener) opens the browser\(display ? "" : ", but needs a display or $BROWSER")")
        }
        return DoctorCheck(
            "browser", .note,
            "xdg-open is not installed (Debian package xdg-utils) and $BROWSER is unset: give --browser-command or open the URL yourself")
    }

    private static func keyring(_ availability: SecretServiceAvailability) -> DoctorCheck {
        switch availability {
        case .available: return DoctorCheck("keyring", .ok, "the Secret Service keyring answers and is unlocked")
        case .unavailable(let reason):
            return DoctorCheck("keyring", .note, "\(reason): refresh tokens go to 0600 files (--storage file), or unlock/start a keyring")
        }
    }

    private static func store(_ store: DoctorFacts.Store) -> DoctorCheck {
        switch store {
        case .missing(let directory):
            return DoctorCheck("store", .ok, "\(directory) does not exist yet; the first sign-in creates it (mode 0700)")
        case .notWritable(let directory, let reason):
            return DoctorCheck("store", .problem, "\(directory) cannot be written (\(reason)); nothing could be stored")
        case .usable(let directory):
            return DoctorCheck("store", .ok, "\(directory) is yours, private and writable")
        case .refused(let message):
            return DoctorCheck("store", .problem, message)
        }
    }

    private static func port(_ port: DoctorFacts.Port) -> DoctorCheck {
        switch port {
        case .anyFree: return DoctorCheck("port", .ok, "the default account's sign-in picks a free port")
        case .free(let number): return DoctorCheck("port", .ok, "port \(number) is free for the redirect")
        case .inUse(let number, let holder):
            let taken = "port \(number) is in use\(holder.isEmpty ? "" : ", held by \(holder)")"
            let name = holder.split(separator: " ").first.map(String.init) ?? ""
            guard ["sfauth", "sfauth-main", "sf", "sfdx"].contains(name) else {
                return DoctorCheck(
                    "port", .problem, taken + ": stop that program, or sign in with another --port (registered where the server wants it exactly)")
            }
            return DoctorCheck("port", .problem, taken + ": probably another sign-in (sfauth or sf) is waiting on it; finish or cancel it")
        }
    }

    private static func proxy(_ facts: DoctorFacts) -> DoctorCheck {
        guard !facts.proxies.isEmpty else { return DoctorCheck("proxy", .ok, "no proxy variables set") }
        let noProxy = facts.noProxy ?? ""
        return DoctorCheck(
            "proxy", .note,
            "\(facts.proxies.joined(separator: ", ")) set (no_proxy: \(noProxy.isEmpty ? "unset" : noProxy)); requests to the server go through it, loopback ones never do"
        )
    }

    private static func clock(_ clock: DoctorFacts.Clock) -> DoctorCheck {
        switch clock {
        case .noServer: return DoctorCheck("clock", .note, "no server to compare with (no default account); give --server URL")
        case .unreachable(let url, let reason):
            return DoctorCheck("clock", .problem, "could not reach \(url): \(reason); a sign-in there would fail the same way")
        case .noDate(let url): return DoctorCheck("clock", .note, "\(url) sent no usable Date header")
        case .offset(let url, let seconds):
            let text = "this machine is \(Int(abs(seconds).rounded())) s \(seconds >= 0 ? "ahead of" : "behind") \(url)"
            guard abs(seconds) > tolerableClockOffset else { return DoctorCheck("clock", .ok, text) }
            return DoctorCheck("clock", .problem, text + ": tokens and assertions will be refused; set the clock (timedatectl set-ntp true)")
        }
    }
}
