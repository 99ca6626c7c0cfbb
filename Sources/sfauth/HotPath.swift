import CredentialProtocols
import FoundationEssentials
import Glibc
import SFAuthModel
import SFAuthStore

/// The hot paths answered without the main program, each exactly as the main program answers it
/// when the stored token is usable: the same lookup (`StoredTokenLookup`) and the same output
/// (`CredentialProtocols`). Whenever the lookup finds nothing to hand out as it is, the answer is
/// `nil` and the main program runs instead — before standard input is read, so it finds it intact.
enum HotPath {
    /// The exit status after answering `arguments` (without the program's name) alone; `nil` for
    /// the main program to answer them. (`exec` does not return: the process becomes the command.)
    /// What was read from standard input before deciding goes in `standardInput`, for the main program
    /// to be given again.
    static func answer(_ arguments: [String], standardInput: inout [UInt8]?) -> Int32? {
        guard let command = HotCommand(arguments) else { return nil }
        let settings = EnvironmentSettings(app: .sfauth, environment: ProcessEnvironment.current())
        switch command {
        case .token(let account, let resource, let headersJSON):
            let now = Date()
            guard let token = usableToken(account, resource: resource, settings, now: now) else { return nil }
            print(headersJSON ? HeaderHelper.render(bearer: token.accessToken) : token.accessToken)
            // Nothing more to do unless the refresh token expires within 7 days (a date compared).
            if let reminder = SignInReminder.line(for: token, settings: settings, app: .sfauth, now: now) {
                let line = Array((reminder + "\n").utf8)
                _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            }
        case .kubeCredential(let account):
            // kubectl's request first, as the main program reads it: a malformed one is its to report.
            guard let request = try? ExecCredential.Request(environment: settings.environment),
                let token = usableToken(account, settings)
            else { return nil }
            print(ExecCredential.render(apiVersion: request.apiVersion, token: token.accessToken, expiry: token.expiry))
        case .gitCredential(let account, let hostTexts, let operation):
            var hosts = [GitCredential.Host]()
            for text in hostTexts {
                guard let host = try? GitCredential.Host(parsing: text) else { return nil }
                hosts.append(host)
            }
            return answerGit(operation, hosts: hosts, account: account, settings)
        case .exec(let account, let command):
            guard let token = usableToken(account, settings) else { return nil }
            CommandLauncher.become(
                command,
                environment: CommandEnvironment.forCommand(
                    with: token, from: settings.environment, secretVariables: settings.secretVariables))
        case .dockerCredentialGet:
            return answerDockerGet(settings, standardInput: &standardInput)
        }
        return ExitStatus.success.rawValue
    }

    /// Docker's `get`: the registry's credentials when its account's token is usable, the
    /// protocol's not-found answer for a registry not set up (`sfauth setup-docker`) — as the main
    /// program answers them — and `nil` for anything else, with the request (the server URL) in
    /// `standardInput` for the main program.
    private static func answerDockerGet(_ settings: EnvironmentSettings, standardInput: inout [UInt8]?) -> Int32? {
        let serverURL = DockerCredential.serverURL(from: DockerCredential.readingStandardInput())
        guard let registry = DockerCredential.registry(fromServerURL: serverURL) else {
            print(DockerCredential.notFound)
            return ExitStatus.storage.rawValue
        }
        standardInput = Array(serverURL.utf8)
        guard let registrations = dockerRegistrations(settings) else { return nil }
        guard let entry = registrations.registries[registry] else {
            print(DockerCredential.notFound)
            return ExitStatus.storage.rawValue
        }
        guard entry.isAccountsOwnToken, let token = usableToken(entry.account, settings) else { return nil }
        print(DockerCredential.answer(serverURL: serverURL, username: entry.username, secret: token.accessToken))
        return ExitStatus.success.rawValue
    }

    /// What `sfauth setup-docker` recorded (`DockerRegistrations`, read through the checked store
    /// directory as the main program reads it); empty when nothing is stored; `nil` when anything is
    /// amiss (a store not private, a file not readable or not decodable): the main program says so.
    private static func dockerRegistrations(_ settings: EnvironmentSettings) -> DockerRegistrations? {
        do {
            guard let store = try StoreDirectory.open(try settings.credentialsDirectory(app: .sfauth)),
                let bytes = try store.read(DockerRegistrations.fileName)
            else { return DockerRegistrations() }
            return try DockerRegistrations(decoding: bytes)
        } catch {
            return nil
        }
    }

    /// git's `get` (the answer for one of `hosts`, nothing for another host) and `store` (nothing to
    /// do: sfauth keeps the token already); `nil` for anything else (`erase` renews a token).
    private static func answerGit(
        _ operation: String, hosts: [GitCredential.Host], account: String?,
        _ settings: EnvironmentSettings
    ) -> Int32? {
        switch operation {
        case "get":
            // Without --account, the main program decides whether the default account's token may go
            // to this host (only to its own server). Looked up before standard input is read: when
            // the main program must answer, it reads it.
            guard account != nil || settings.suppliedToken != nil, let token = usableToken(account, settings) else { return nil }
            let attributes = GitCredential.Attributes.readingStandardInput()
            if hosts.contains(where: { $0.matches(attributes) }) {
                print(
                    GitCredential.answer(
                        username: token.username ?? GitCredential.defaultUsername, password: token.accessToken,
                        expiry: token.expiry), terminator: "")
            }
        case "store":
            _ = GitCredential.Attributes.readingStandardInput()
        default:
            return nil
        }
        return ExitStatus.success.rawValue
    }

    /// The token to hand out as it is, or `nil` for the main program.
    private static func usableToken(
        _ account: String?, resource: String? = nil, _ settings: EnvironmentSettings, now: Date = Date()
    ) -> IssuedToken? {
        guard case .usable(let token) = StoredTokenLookup.lookUp(account: account, resource: resource, settings: settings, app: .sfauth, now: now)
        else {
            return nil
        }
        return token
    }
}
