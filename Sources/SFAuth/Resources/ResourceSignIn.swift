import FoundationEssentials
import SFAuthCore

/// Prepares a browser sign-in to a protected resource from nothing but its URL: discovers its
/// authorization server (`ResourceDiscovery`), then finds the client to sign in with, in the MCP
/// authorization specification's order — a pre-registered client id; a Client ID Metadata Document
/// when the server accepts them; else Dynamic Client Registration (RFC 7591) as a native public
/// client, kept per server (`ClientRegistrations`) with the loopback port it registered and reused
/// by later sign-ins, since servers such as the MCP SDK's compare the redirect URI exactly. The
/// result is an `OAuthCoordinator.Configuration`'s server and client, the client carrying the
/// resource (RFC 8707) for every request.
///
/// ```swift
/// let prepared = try await ResourceSignIn(httpClient: http, discoveryClient: discovery,
///                                         registrations: ClientRegistrations(store: store))
///     .prepare(resource: "https://mcp.example/mcp")
/// let coordinator = OAuthCoordinator(configuration: .init(server: prepared.server, client: prepared.client),
///                                    delegate: self, store: store)
/// let credentials = try await coordinator.authenticate()
/// ```
public struct ResourceSignIn: Sendable {
    /// What the person chose; everything else is discovered.
    public struct Options: Sendable, Equatable {
        /// The authorization server, when the resource names several (`nil`: the first).
        public var issuer: String?
        /// A client registered by hand (`nil`: a metadata document or a registration).
        public var clientId: String?
        /// The secret of a pre-registered confidential client.
        public var clientSecret: String?
        /// The URL of a Client ID Metadata Document describing this program, used as its client id
        /// where the server accepts such documents.
        public var clientMetadataURL: String?
        /// The scopes (`[]`: the challenge's, else those the resource lists).
        public var scopes: [String]
        /// The loopback redirect: host and path, and a port (0: the registered one, else any free one).
        public var redirect: RedirectConfiguration
        /// The name a registration gives the server to show on its consent page.
        public var clientName: String
        /// Extra authorization parameters (`prompt`, `login_hint`).
        public var additionalAuthorizationParameters: [AuthorizationParameter]

        /// Options; every one has a default.
        ///
        /// - Parameters:
        ///   - issuer: the authorization server to choose among several.
        ///   - clientId: a pre-registered client.
        ///   - clientSecret: its secret, when it is confidential.
        ///   - clientMetadataURL: a Client ID Metadata Document's URL.
        ///   - scopes: the scopes to ask for.
        ///   - redirect: the loopback redirect.
        ///   - clientName: the registered client's name. Default: `sfauth`.
        ///   - additionalAuthorizationParameters: extra authorization parameters.
        public init(
            issuer: String? = nil, clientId: String? = nil, clientSecret: String? = nil, clientMetadataURL: String? = nil,
            scopes: [String] = [], redirect: RedirectConfiguration = RedirectConfiguration(), clientName: String = "sfauth",
            additionalAuthorizationParameters: [AuthorizationParameter] = []
        ) {
            self.issuer = issuer
            self.clientId = clientId
            self.clientSecret = clientSecret
            self.clientMetadataURL = clientMetadataURL
            self.scopes = scopes
            self.redirect = redirect
            self.clientName = clientName
            self.additionalAuthorizationParameters = additionalAuthorizationParameters
        }
    }

    /// Where the client came from.
    public enum ClientSource: Sendable, Equatable {
        /// The client id given (`Options.clientId`).
        case preRegistered
        /// A Client ID Metadata Document: the client id is its URL.
        case metadataDocument(String)
        /// A registration (RFC 7591); `reused` when it was kept from an earlier sign-in.
        case registered(RegisteredClient, reused: Bool)
    }

    /// A sign-in ready to run.
    public struct Prepared: Sendable, Equatable {
        /// What discovery found.
        public var found: ResourceDiscovery.Found
        /// The authorization server.
        public var server: AuthorizationServer
        /// The client, with the scopes, the redirect and the resource.
        public var client: ClientConfiguration
        /// Where the client came from.
        public var clientSource: ClientSource
        /// What the person should know (a registration made or replaced, a document not used).
        public var notices: [String]
    }

    private let httpClient: any HTTPClient
    private let discovery: ResourceDiscovery
    private let registrations: ClientRegistrations?
    private let clock: any AuthClock

    /// Creates a preparation.
    ///
    /// - Parameters:
    ///   - httpClient: sends the probes, metadata requests and registrations.
    ///   - discoveryClient: fetches (and caches) authorization server metadata.
    ///   - registrations: where registrations are kept; `nil`: registered anew each time, kept nowhere.
    ///   - clock: the time registrations are stamped with.
    public init(
        httpClient: any HTTPClient, discoveryClient: DiscoveryClient, registrations: ClientRegistrations?,
        clock: any AuthClock = SystemClock()
    ) {
        self.httpClient = httpClient
        discovery = ResourceDiscovery(httpClient: httpClient, discoveryClient: discoveryClient)
        self.registrations = registrations
        self.clock = clock
    }

    /// Discovers `resource`'s authorization server and finds the client to sign in with.
    ///
    /// - Parameters:
    ///   - resource: the protected resource's URL.
    ///   - options: what the person chose.
    /// - Throws: what `ResourceDiscovery.discover` throws; `OAuthError.configuration` when no client
    ///   can be had (the server registers none and none was given) or a registration was refused;
    ///   `.authorizationDenied` when the server already refuses the request it would get (a scope
    ///   it does not grant, say) — before any browser opens.
    public func prepare(resource: String, options: Options = Options()) async throws(OAuthError) -> Prepared {
        let found = try await discovery.discover(resource: resource, issuer: options.issuer)
        let server = found.authorizationServer.server
        let scopes = options.scopes.isEmpty ? found.suggestedScopes : options.scopes
        var prepared = Prepared(
            found: found, server: server,
            client: ClientConfiguration(
                clientId: "", clientSecret: options.clientSecret, scopes: scopes, redirect: options.redirect,
                additionalAuthorizationParameters: options.additionalAuthorizationParameters, resource: found.resource),
            clientSource: .preRegistered, notices: [])
        if let clientId = options.clientId {
            prepared.client.clientId = clientId
            return prepared
        }
        let issuer = found.authorizationServer.issuer
        if let documentURL = options.clientMetadataURL {
            if found.authorizationServer.clientIdMetadataDocumentSupported {
                prepared.client.clientId = documentURL
                prepared.client.redirect = try await redirectOfMetadataDocument(at: documentURL, default: options.redirect)
                prepared.clientSource = .metadataDocument(documentURL)
                return prepared
            }
            prepared.notices.append("\(issuer) does not accept Client ID Metadata Documents, so a client is registered there instead.")
        }
        guard let endpoint = found.authorizationServer.registrationEndpoint else {
            throw .configuration(
                Problem(
                    "\(issuer) registers no clients by itself (its metadata has no registration_endpoint), and no client id was given",
                    remedy: .registerClientAt(issuer: issuer)))
        }
        let kept = registrations?.registration(at: issuer)
        if let kept, kept.isUsable(for: scopes, at: clock.now()), let redirect = kept.redirect, Self.portIsFree(redirect),
            options.redirect.port == 0 || options.redirect.port == redirect.port
        {
            var client = prepared.client
            client.clientId = kept.clientId
            client.clientSecret = kept.clientSecret ?? options.clientSecret
            client.redirect = redirect
            if try await serverKnows(client, at: server, redirectURI: kept.redirectURI) {
                prepared.client = client
                prepared.clientSource = .registered(kept, reused: true)
                return prepared
            }
            registrations?.forget(issuer: issuer)
            prepared.notices.append(
                "\(issuer) no longer knows the client it registered for \(options.clientName) (\(kept.clientId)); registering a new one.")
        }
        // A new registration keeps the port of the last one where it can (nothing else to update).
        var redirect = options.redirect
        if redirect.port == 0, let previous = kept?.redirect, Self.portIsFree(previous) { redirect.port = previous.port }
        if redirect.port == 0 { redirect.port = try Self.freePort(host: redirect.host) }
        let redirectURI = redirect.redirectURI(boundPort: redirect.port)
        let registeredScopes = Self.union(scopes, found.metadata.scopesSupported ?? [], kept?.scopes ?? [])
        let response = try await httpClient.sendForOAuth(
            ClientRegistration.request(endpoint: endpoint, redirectURI: redirectURI, clientName: options.clientName, scopes: registeredScopes))
        let registered = try ClientRegistration.decode(response, issuer: issuer, redirectURI: redirectURI, scopes: registeredScopes, now: clock.now())
        try registrations?.keep(registered)
        prepared.client.clientId = registered.clientId
        prepared.client.clientSecret = registered.clientSecret ?? options.clientSecret
        prepared.client.redirect = redirect
        prepared.clientSource = .registered(registered, reused: false)
        prepared.notices.append(
            "Registered \(options.clientName) as a client at \(issuer) (client id \(registered.clientId), redirect \(redirectURI)).")
        return prepared
    }

    // MARK: - Steps

    /// Whether the server still accepts `client` with `redirectURI`, judged by its answer to the
    /// authorization request it would get (without the browser): RFC 6749 §4.1.2.1 has a server
    /// answer an unknown client or redirect URI itself, with an error page (a 4xx), and never
    /// redirect; any other answer (a login page, a redirect onward) means it knows both. A refusal
    /// it redirects back (an unknown scope) is thrown now, before any browser opens.
    private func serverKnows(_ client: ClientConfiguration, at server: AuthorizationServer, redirectURI: String) async throws(OAuthError) -> Bool {
        var random = SystemRandomNumberGenerator()
        let request = AuthorizationRequest(server: server, client: client, redirectURI: redirectURI, using: &random)
        let response = try await httpClient.sendForOAuth(HTTPRequest(method: "GET", url: request.url, headers: [("Accept", "text/html")]))
        if (400..<500).contains(response.status) { return false }
        if (300..<400).contains(response.status), let location = response.headers["location"], location.hasPrefix(redirectURI) {
            if case .denied(let error) = CallbackOutcome(pastedURL: location, redirectURI: redirectURI, expectedState: request.state) {
                throw .authorizationDenied(error)
            }
        }
        return true
    }

    /// The loopback redirect a Client ID Metadata Document lists first (its port when it names one,
    /// else `fallback`'s), so that the redirect URI is one the server will find in it.
    private func redirectOfMetadataDocument(at url: String, default fallback: RedirectConfiguration) async throws(OAuthError) -> RedirectConfiguration
    {
        try EndpointURL.requireSecure(url, name: "client metadata document URL")
        let response = try await httpClient.sendForOAuth(HTTPRequest(method: "GET", url: url, headers: [("Accept", "application/json")]))
        guard response.status == 200, let json = JSONValue.parse(response.body) else {
            throw .configuration("the client metadata document \(url) could not be read (HTTP \(response.status))")
        }
        guard json["client_id"]?.stringValue == url else {
            throw .configuration("the client metadata document \(url) names another client_id than its own URL, which servers refuse")
        }
        let uris: [String]
        if case .array(let values)? = json["redirect_uris"] { uris = values.compactMap(\.stringValue) } else { uris = [] }
        for uri in uris {
            guard var redirect = RedirectConfiguration(loopbackURI: uri) else { continue }
            if redirect.port == 0 { redirect.port = fallback.port }
            return redirect
        }
        throw .configuration("the client metadata document \(url) lists no loopback redirect URI (http://127.0.0.1/…) to listen on")
    }

    /// Whether the redirect's port can be listened on now.
    private static func portIsFree(_ redirect: RedirectConfiguration) -> Bool {
        guard let bound = try? LoopbackSockets.bind(host: redirect.host, port: redirect.port) else { return false }
        bound.fds.forEach(LoopbackSockets.shutdownAndClose)
        return true
    }

    /// A port free on `host` now, for a registration to name (the listener binds it moments later).
    private static func freePort(host: String) throws(OAuthError) -> UInt16 {
        let bound = try LoopbackSockets.bind(host: host, port: 0)
        bound.fds.forEach(LoopbackSockets.shutdownAndClose)
        return bound.port
    }

    /// The scopes of all lists, each once, in the order first seen.
    private static func union(_ lists: [String]...) -> [String] {
        var seen = Set<String>()
        return lists.joined().filter { seen.insert($0).inserted }
    }
}
