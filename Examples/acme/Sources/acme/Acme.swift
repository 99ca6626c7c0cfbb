import FoundationEssentials
import SFAuth

/// acme's commands: each is a few calls into SFAuth.
enum Acme {
    /// Who acme is to SFAuth: its accounts live in `$XDG_DATA_HOME/acme`, its refresh tokens in the
    /// keyring under its own schema, and the browser's page says "Acme CLI".
    static let app = AppIdentity(name: "acme", displayName: "Acme CLI")

    /// acme's settings from its own variables: `ACME_HOME`, `ACME_TOKEN_LEEWAY`, `ACME_STORAGE`…
    static let settings = EnvironmentSettings(prefix: "ACME", environment: ProcessInfo.processInfo.environment)

    static func login(options: [String]) async throws {
        var issuer = settings.value("ISSUER")
        var clientId = settings.value("CLIENT_ID")
        var rest = options[...]
        while let option = rest.popFirst() {
            switch option {
            case "--issuer": issuer = rest.popFirst()
            case "--client-id": clientId = rest.popFirst()
            default: throw AcmeUI.Usage("unknown option \(option)")
            }
        }
        guard let issuer, let clientId else { throw AcmeUI.Usage("give --issuer and --client-id (or ACME_ISSUER and ACME_CLIENT_ID)") }
        let server = try await DiscoveryClient(cacheDirectory: DiscoveryClient.cacheDirectory(app: app, environment: settings.environment))
            .discover(issuer: issuer).server
        let credentials = try await coordinator(server: server, clientId: clientId).authenticate()
        print("Welcome, \(credentials.username ?? credentials.identifier).")
    }

    static func whoami() async throws {
        let credentials = try await storedCoordinator().accessToken(interactive: false)
        print("\(credentials.username ?? credentials.identifier) at \(credentials.server.issuer ?? credentials.server.tokenEndpoint)")
    }

    static func get(_ url: String) async throws {
        let store = try store()
        let requester = AuthorizedRequester(
            tokenSource: TokenSource(store: store, options: try TokenSource.Options(settings: settings)),
            httpClient: CurlHTTPClient())
        let (response, _) = try await requester.send(account: nil) { _ in HTTPRequest(method: "GET", url: url) }
        print(response.bodyText)
        if response.status >= 400 { throw AcmeUI.Usage("the API answered \(response.status)") }
    }

    /// Signs the default account out the one way SFAuth has: `AccountBook.forget` revokes its
    /// tokens at the server (the refresh token read from the keyring) and then removes it.
    static func logout() async throws {
        let store = try store()
        guard let identifier = try store.defaultIdentifier() else {
            throw OAuthError.loginRequired(.init("nobody is signed in", remedy: .signIn(account: nil, grant: nil)))
        }
        let revoker = TokenRevoker(clientSecret: settings.clientSecret)
        switch try await AccountBook(store: store).forget(identifier, revokingWith: revoker, removingUnreadable: false) {
        case .forgotten(let credentials, let revocation):
            print("Signed out of \(credentials.displayLabel): \(revocation?.summary ?? "forgotten here").")
        case .revokedButKept(_, revocation: _, let error), .unreadableKept(path: _, problem: let error):
            throw error
        case .forgottenLeavingSecret(let credentials, let item, let reason):
            print("Signed out of \(credentials.displayLabel) here; the keyring is out of reach (\(reason)): remove \(item) there later.")
        case .notStored, .unreadableRemoved:
            print("Signed out.")
        }
    }

    // MARK: - SFAuth, set up as acme

    static func store() throws(OAuthError) -> FileCredentialStore {
        FileCredentialStore(
            directory: try settings.credentialsDirectory(app: app),
            secretStore: try settings.storageMode() == .file ? nil : SecretServiceStore(app: app))
    }

    static func coordinator(server: AuthorizationServer, clientId: String) throws -> OAuthCoordinator {
        OAuthCoordinator(
            configuration: .init(
                server: server, client: ClientConfiguration(clientId: clientId, scopes: ["openid", "profile"]),
                app: app, tokenOptions: try TokenSource.Options(settings: settings)),
            delegate: AcmeUI.shared, store: try store())
    }

    /// A coordinator for the stored account (its own server and client).
    static func storedCoordinator() throws -> OAuthCoordinator {
        let store = try store()
        guard let stored = try store.loadDefault() else {
            throw OAuthError.loginRequired(.init("nobody is signed in", remedy: .signIn(account: nil, grant: nil)))
        }
        return try coordinator(server: stored.server, clientId: stored.clientId)
    }
}
