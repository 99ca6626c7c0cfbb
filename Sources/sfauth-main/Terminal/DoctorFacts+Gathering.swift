import FoundationEssentials
import Glibc
import SFAuth
import SFAuthCLI

extension DoctorFacts {
    /// Looks at this machine: the session, the browser opener, the keyring, the store, the callback
    /// port, the proxies, and the clock of `server` (else the default account's server) — the only
    /// network request — or, when `serverOptions` is given, the server they name: its metadata, and
    /// the clock of the host that published it.
    ///
    /// - Parameters:
    ///   - port: the callback port to check; default: the default account's, else Salesforce's 1717.
    ///   - serverOptions: `--preset`, `--issuer` and `--host`, as a configuration layer; `nil` when
    ///     none was given.
    static func gather(in context: CommandContext, server: String?, port: UInt16?, serverOptions: ConfigurationLayer? = nil) async
        -> DoctorFacts
    {
        let environment = context.environment
        let (store, account) = storeAndDefaultAccount(context)
        let proxyVariables = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
        var clock = Clock.noServer
        var named: Server?
        if let serverOptions {
            (named, clock) = await Self.server(namedBy: serverOptions, in: context)
        } else if let target = server ?? account.map({ $0.server.issuer ?? $0.server.tokenEndpoint }) {
            clock = await Self.clock(against: target, in: context)
        }
        return DoctorFacts(
            session: context.session,
            opener: executable("xdg-open", path: environment["PATH"]),
            browserFound: context.session.browserVariable.map { browserCommandExists($0, path: environment["PATH"]) },
            displayAnswers: context.session.kind.display.map { DisplayProbe.answers($0, runtimeDirectory: environment["XDG_RUNTIME_DIR"]) },
            keyring: SecretServiceStore.probe(),
            store: store,
            port: callbackPort(port ?? account?.signInRecipe.callbackPort ?? Salesforce.defaultRedirect.port),
            proxies: proxyVariables.filter { !(environment[$0] ?? "").isEmpty },
            noProxy: environment["no_proxy"] ?? environment["NO_PROXY"],
            clock: clock, server: named)
    }

    /// Whether the store can be used (creating nothing), and its default account.
    private static func storeAndDefaultAccount(_ context: CommandContext) -> (Store, OAuthCredentials?) {
        do throws(OAuthError) {
            let store = try context.accountStore()
            _ = try store.identifiers()  // refuses a directory that is not private; creates nothing
            let account = try? store.loadDefault()
            if access(store.directory, F_OK) != 0 { return (.missing(directory: store.directory), account) }
            if access(store.directory, W_OK) != 0 {
                return (.notWritable(directory: store.directory, reason: String(cString: strerror(errno))), account)
            }
            return (.usable(directory: store.directory), account)
        } catch {
            return (.refused(SFAuthWords.message(for: error)), nil)
        }
    }

    /// Whether `port` is taken on 127.0.0.1, and by whom.
    private static func callbackPort(_ port: UInt16) -> Port {
        guard port != 0 else { return .anyFree }
        do {
            let listener = try LoopbackListener(configuration: .init(host: "127.0.0.1", port: port))
            listener.cancel()
            return .free(port)
        } catch {
            guard case .portInUse(_, _, let heldBy) = error else { return .free(port) }
            return .inUse(port, holder: heldBy ?? "")
        }
    }

    /// This machine's clock against the server's `Date` header: ID tokens and JWT assertions are
    /// refused when the two disagree by minutes.
    static func clock(against url: String, in context: CommandContext) async -> Clock {
        do throws(OAuthError) {
            let client = try context.httpClient(connectTimeout: .seconds(5), totalTimeout: .seconds(10))
            let before = Date()
            let response = try await client.sendForOAuth(HTTPRequest(method: "HEAD", url: url))
            return clock(of: response, from: url, sentAt: before, answeredAt: Date())
        } catch {
            return .unreachable(url: url, reason: error.description)
        }
    }

    /// This machine's clock against the `Date` of `response`, taken as the middle of the exchange.
    static func clock(of response: HTTPResponse, from url: String, sentAt before: Date, answeredAt after: Date) -> Clock {
        guard let header = response.headers["date"], let serverTime = HTTPDate.parse(header) else { return .noDate(url: url) }
        let local = before.addingTimeInterval(after.timeIntervalSince(before) / 2)
        return .offset(url: url, seconds: local.timeIntervalSince(serverTime))
    }

    /// Whether one of the commands of `$BROWSER` (a colon-separated list, as xdg-open reads it) exists.
    private static func browserCommandExists(_ variable: String, path: String?) -> Bool {
        variable.split(separator: ":").contains { entry in
            guard let program = (try? splitCommandLine(String(entry)))?.first else { return false }
            return executable(program, path: path) != nil
        }
    }

    private static func executable(_ name: String, path: String?) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for directory in (path ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
