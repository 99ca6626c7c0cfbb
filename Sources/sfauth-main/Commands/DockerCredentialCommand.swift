import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `docker-credential-sfauth get|store|erase|list` (a link to sfauth; the front end turns a run
/// under that name into `sfauth docker-credential …`): Docker's credential helper protocol,
/// answering `get` with a fresh access token of the account `sfauth setup-docker` chose for the
/// registry.
struct DockerCredentialCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "Docker credential helper (run as docker-credential-sfauth): answer get with the account's access token.",
        discussion: """
            Docker, skopeo, podman and buildah run docker-credential-sfauth (a link to sfauth) for the \
            registries whose credHelpers entry is "sfauth" (sfauth setup-docker writes it), with the \
            operation as its argument and the request on standard input.

            get: standard input is the registry (host:port, or a URL such as https://index.docker.io/v1/). \
            For a registry set up with sfauth setup-docker it prints {"ServerURL","Username","Secret"}: \
            Secret is the account's access token, refreshed when needed as for sfauth token; Username \
            is oauth2accesstoken, the name given with --username, or <token> with --identity-token (the \
            client then trades the token at the registry's token endpoint as an OAuth 2 refresh_token). \
            For any other registry it prints "credentials not found in native keychain" and exits 1, \
            and the client goes on without credentials. When a sign-in is needed it says which \
            command to run (on standard error, and on standard output, which clients show) and exits 3. \
            It never opens a browser.

            store is refused (exit 2): sfauth keeps no registry passwords, it hands out a fresh token on \
            every get. erase (docker logout, skopeo logout) stops answering for that registry — its \
            setup is removed, the account stays signed in; sfauth setup-docker sets it up again. list \
            prints {"<registry>":"<username>"} for the registries set up.

            Examples:
              sfauth setup-docker --registry registry.example --account work
              printf registry.example | docker-credential-sfauth get
            """
    )

    @Argument(help: ArgumentHelp("What the client asks: get, store, erase or list.", valueName: "operation"))
    var operation: String

    func run(in context: CommandContext) async throws {
        let book = DockerRegistryBook(directory: try context.settings.credentialsDirectory(app: .sfauth))
        switch operation {
        case "get":
            try await Self.get(book: book, in: context)
        case "store":
            try Self.store(book: book, in: context)
        case "erase":
            try Self.erase(book: book)
        case "list":
            print(DockerCredential.list(try book.registrations().registries.mapValues(\.username)))
        default:
            throw CommandFailure(
                usage: "\(DockerCredential.programName) answers get, store, erase and list, not '\(TerminalText.escaped(operation))'")
        }
    }

    /// The registry's credentials; the protocol's not-found answer for a registry not set up.
    private static func get(book: DockerRegistryBook, in context: CommandContext) async throws {
        let serverURL = DockerCredential.serverURL(from: DockerCredential.readingStandardInput())
        guard let registry = DockerCredential.registry(fromServerURL: serverURL), let entry = try told(book.registrations).registries[registry]
        else {
            throw notFound()
        }
        let token = try await toldAsync { () async throws(CommandFailure) in
            do {
                return try await Self.token(of: entry, for: registry, in: context)
            } catch let failure as CommandFailure {
                throw failure
            } catch let error as OAuthError {
                throw CommandFailure(error, context: "\(DockerCredential.programName) has no token for \(registry)")
            } catch {
                throw CommandFailure("\(error)", status: .localFault)
            }
        }
        print(DockerCredential.answer(serverURL: serverURL, username: entry.username, secret: token.accessToken))
        if let notice = context.minimumValidityNotice(for: token, wanted: wanted(entry)) { StandardError.line(notice) }
    }

    /// The token `setup-docker` asked for: the account's own, or a per-call one.
    private static func wanted(_ entry: DockerRegistrations.Entry) -> WantedToken {
        WantedToken(
            target: entry.target ?? TokenTarget(), forceExchange: entry.exchange ?? false,
            minimumValidity: entry.minValid.flatMap(WantedToken.duration))
    }

    /// The account's token, as `sfauth token --account` gets it; a sign-in needed when the account
    /// chosen for the registry is no longer stored.
    private static func token(of entry: DockerRegistrations.Entry, for registry: String, in context: CommandContext) async throws -> IssuedToken {
        if context.settings.suppliedToken == nil, try context.accountStore().load(identifier: entry.account) == nil {
            throw CommandFailure(
                "the account sfauth setup-docker chose for \(registry) is no longer stored: sign in (`sfauth login`), then run "
                    + "`sfauth setup-docker --registry \(registry)` again", status: .loginRequired)
        }
        return try await context.accessToken(account: entry.account, resource: entry.resource, wanted: wanted(entry))
    }

    /// Refused: sfauth hands out the account's token on every `get` and keeps no passwords — except
    /// that a client storing back the very token `get` gave it is told yes (nothing to keep).
    private static func store(book: DockerRegistryBook, in context: CommandContext) throws {
        let input = DockerCredential.readingStandardInput()
        let request = DockerCredential.StoreRequest.reading(input)
        let registry = request?.serverURL.flatMap(DockerCredential.registry(fromServerURL:))
        if let registry, let entry = try? book.registrations().registries[registry], request?.username == entry.username,
            let secret = request?.secret, secret == context.usableToken(account: entry.account)?.accessToken
        {
            return
        }
        let named = registry.map { " (for \($0) too)" } ?? ""
        throw told(
            CommandFailure(
                usage: "store refused: sfauth keeps no registry passwords\(named), it hands out the account's token on every get "
                    + "(`sfauth setup-docker --registry HOST` sets a registry up); to keep a password for a registry, remove its credHelpers entry"
            ))
    }

    /// Stops answering for the registry: its setup goes, the account stays. Docker clients send
    /// `erase` only for `docker logout` / `skopeo logout` (containers/image `RemoveAuthentication`),
    /// never after a refused request (git does: there `erase` must not change anything).
    private static func erase(book: DockerRegistryBook) throws {
        let serverURL = DockerCredential.serverURL(from: DockerCredential.readingStandardInput())
        guard let registry = DockerCredential.registry(fromServerURL: serverURL) else { throw notFound() }
        var removed: DockerRegistrations.Entry?
        _ = try told {
            try book.update { registrations in
                removed = registrations.registries.removeValue(forKey: registry)
                return removed != nil
            }
        }
        guard let removed else { throw notFound() }
        StandardError.line(
            "sfauth: \(registry) gets no more tokens from sfauth (the account stays signed in); "
                + "`sfauth setup-docker --registry \(registry) --account \(TerminalText.escaped(ExecCredential.shellWord(removed.account)))` sets it up again."
        )
    }

    /// The protocol's "nothing for this server": the fixed text on stdout, exit 1.
    private static func notFound() -> CommandFailure {
        print(DockerCredential.notFound)
        return CommandFailure(silently: .storage)
    }

    /// `failure`, its line also printed on standard output: clients show what a helper printed
    /// there ("error getting credentials - err: exit status 3, out: `…`"), not its stderr.
    private static func told(_ failure: CommandFailure) -> CommandFailure {
        if let message = failure.message { print("sfauth: " + SFAuthCommand.sentence(TerminalText.escaped(message))) }
        return failure
    }

    /// Runs `body`; a failure it throws is also said on standard output (`told`).
    private static func told<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as CommandFailure { throw told(failure) } catch let error as OAuthError {
            throw told(CommandFailure(error))
        }
    }

    private static func toldAsync<T>(_ body: () async throws(CommandFailure) -> T) async throws -> T {
        do { return try await body() } catch { throw told(error) }
    }
}
