import ArgumentParser
import SFAuth
import SFAuthCLI
import Glibc
import FoundationEssentials

/// `sfauth doctor`: checks what a sign-in needs on this machine, one line per check, with the fix.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what a sign-in needs here: browser, display, keyring, store, clock, proxy, callback port.",
        discussion: """
            Prints one line per check — ok, note or PROBLEM — with the fix. Exits 1 when something would \
            stop a sign-in (the store cannot be used, the callback port is taken); notes (no display, a \
            locked keyring, a proxy) only change how the sign-in goes. The clock is compared with the \
            Date header of the default account's server (or --server URL), the only network request.

            Examples:
              sfauth doctor
              sfauth doctor --server https://login.salesforce.com --port 1717
            """
    )

    @Option(help: ArgumentHelp("A server whose clock to compare with this machine's. Default: the default account's.", valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("The callback port to check. Default: the default account's, else 1717 (Salesforce's).", valueName: "port"))
    var port: UInt16?

    /// One check's verdict.
    enum Verdict: String {
        case ok, note, problem = "PROBLEM"
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var results: [(name: String, verdict: Verdict, text: String)] = []
        func report(_ name: String, _ verdict: Verdict, _ text: String) { results.append((name, verdict, text)) }

        // Where a browser can open.
        let display = LoginProgressReporter.hasDisplay(environment)
        let wsl = (try? String(contentsOfFile: "/proc/version", encoding: .utf8))?.lowercased().contains("microsoft") == true
        if display {
            report("display", .ok, "a display is available (\(environment["WAYLAND_DISPLAY"].map { "Wayland \($0)" } ?? "X11 \(environment["DISPLAY"] ?? "")"))")
        } else if wsl {
            report("display", .note, "WSL: the Windows browser opens through $BROWSER or wslview; if none does, open the printed URL yourself")
        } else {
            report("display", .note, "no display (DISPLAY and WAYLAND_DISPLAY are unset): sign-in prints the URL; paste the address back, forward the port, or use --device")
        }
        let opener = Self.executable("xdg-open", environment: environment)
        if let browser = environment["BROWSER"], !browser.isEmpty {
            report("browser", .ok, "$BROWSER is \(browser)\(opener == nil ? " (xdg-open is not installed)" : "")")
        } else if let opener {
            report("browser", display ? .ok : .note, "\(opener) opens the browser\(display ? "" : ", but needs a display or $BROWSER")")
        } else {
            report("browser", .note, "xdg-open is not installed (Debian package xdg-utils) and $BROWSER is unset: give --browser-command or open the URL yourself")
        }
        if let ssh = environment["SSH_CONNECTION"] {
            let client = ssh.split(separator: " ").first.map(String.init) ?? "?"
            report("ssh", .note, "connected over SSH from \(client): a browser there reaches this login through `ssh -L PORT:localhost:PORT`, or paste the address back")
        }

        // Where the secrets go.
        switch SecretServiceStore.probe() {
        case .available: report("keyring", .ok, "the Secret Service keyring answers and is unlocked")
        case .unavailable(let reason): report("keyring", .note, "\(reason): refresh tokens go to 0600 files (--storage file), or unlock/start a keyring")
        }
        var account: OAuthCredentials?
        do throws(OAuthError) {
            let store = try StoreSetup.existingAccounts(environment: environment)
            _ = try store.identifiers()  // refuses a directory that is not private; creates nothing
            if access(store.directory, F_OK) != 0 {
                report("store", .ok, "\(store.directory) does not exist yet; the first sign-in creates it (mode 0700)")
            } else if access(store.directory, W_OK) != 0 {
                report("store", .problem, "\(store.directory) cannot be written (\(String(cString: strerror(errno)))); nothing could be stored")
            } else {
                report("store", .ok, "\(store.directory) is yours, private and writable")
            }
            account = try? store.loadDefault()
        } catch {
            report("store", .problem, SFAuthWords.message(for: error))
        }

        // The callback port.
        let port = self.port ?? account?.signInRecipe.callbackPort ?? Salesforce.defaultRedirect.port
        if port == 0 {
            report("port", .ok, "the default account's sign-in picks a free port")
        } else if let holder = Self.portHolder(port) {
            report("port", .problem, "port \(port) is in use\(holder.isEmpty ? "" : ", held by \(holder)"): probably another sign-in (sfauth or sf) is waiting on it; finish or cancel it")
        } else {
            report("port", .ok, "port \(port) is free for the redirect")
        }

        // Proxies, and the clock against a server.
        let proxies = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"].filter { !(environment[$0] ?? "").isEmpty }
        if proxies.isEmpty {
            report("proxy", .ok, "no proxy variables set")
        } else {
            let noProxy = environment["no_proxy"] ?? environment["NO_PROXY"] ?? ""
            report("proxy", .note, "\(proxies.joined(separator: ", ")) set (no_proxy: \(noProxy.isEmpty ? "unset" : noProxy)); requests to the server go through it, loopback ones never do")
        }
        if let target = server ?? account.map({ $0.server.issuer ?? $0.server.tokenEndpoint }) {
            await checkClock(target, environment: environment, report: report)
        } else {
            report("clock", .note, "no server to compare with (no default account); give --server URL")
        }

        for result in results {
            print("\(result.verdict.rawValue.padding(toLength: 7)) \(result.name.padding(toLength: 8)) \(result.text.terminalSafe)")
        }
        if results.contains(where: { $0.verdict == .problem }) { throw ExitCode(ExitStatus.storage.rawValue) }
    }

    /// Compares this machine's clock with the server's `Date` header: ID tokens and JWT assertions
    /// are refused when the two disagree by minutes.
    private func checkClock(_ url: String, environment: [String: String], report: (String, Verdict, String) -> Void) async {
        do throws(OAuthError) {
            let client = try HTTPSettings.client(environment: environment, connectTimeout: .seconds(5), totalTimeout: .seconds(10))
            let before = Date()
            let response = try await client.sendForOAuth(HTTPRequest(method: "HEAD", url: url))
            let after = Date()
            guard let header = response.headers["date"], let serverTime = Self.httpDate(header) else {
                report("clock", .note, "\(url) sent no usable Date header")
                return
            }
            let local = before.addingTimeInterval(after.timeIntervalSince(before) / 2)
            let offset = local.timeIntervalSince(serverTime)
            let text = "this machine is \(Int(abs(offset).rounded())) s \(offset >= 0 ? "ahead of" : "behind") \(url)"
            report("clock", abs(offset) > 60 ? .problem : .ok, abs(offset) > 60 ? text + ": tokens and assertions will be refused; set the clock (timedatectl set-ntp true)" : text)
        } catch {
            report("clock", .note, "could not reach \(url): \(error.description)")
        }
    }

    /// An IMF-fixdate (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func httpDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]) else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3 else { return nil }
        var value = tm()
        value.tm_year = Int32(year - 1900)
        value.tm_mon = Int32(month)
        value.tm_mday = Int32(day)
        value.tm_hour = Int32(time[0])
        value.tm_min = Int32(time[1])
        value.tm_sec = Int32(time[2])
        return Date(timeIntervalSince1970: TimeInterval(timegm(&value)))
    }

    /// Whether `port` is taken on 127.0.0.1, and by whom (empty when it cannot be told).
    private static func portHolder(_ port: UInt16) -> String? {
        do {
            let listener = try LoopbackListener(configuration: .init(host: "127.0.0.1", port: port))
            listener.cancel()
            return nil
        } catch {
            guard case .portInUse(_, _, let heldBy) = error else { return nil }
            return heldBy ?? ""
        }
    }

    private static func executable(_ name: String, environment: [String: String]) -> String? {
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }
}
