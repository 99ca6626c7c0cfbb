import SFAuth

/// What `sfauth doctor` found on this machine, before any verdict: gathered by the program (files,
/// sockets, the keyring, one request for the server's clock), judged by `DoctorCheck.checks(_:)`.
package struct DoctorFacts: Sendable, Equatable {
    /// The terminal session: display, SSH (and from where), WSL, `$BROWSER`.
    package var session: TerminalSession
    /// Where `xdg-open` is, when it is installed.
    package var opener: String?
    /// Whether the command `$BROWSER` names can be found; `nil` when `$BROWSER` is unset.
    package var browserFound: Bool?
    /// Whether something answers at the display (its socket accepts a connection); `nil` when
    /// there is no display.
    package var displayAnswers: Bool?
    /// Whether the keyring answers.
    package var keyring: SecretServiceAvailability
    /// The credentials directory.
    package var store: Store
    /// The callback port and whether it is free.
    package var port: Port
    /// The proxy variables that are set, and `no_proxy`.
    package var proxies: [String]
    package var noProxy: String?
    /// The clock against a server's.
    package var clock: Clock
    /// The server `--issuer` or `--preset` names, and its metadata; `nil` when neither was given.
    package var server: Server?

    /// The credentials directory.
    package enum Store: Sendable, Equatable {
        /// It does not exist yet.
        case missing(directory: String)
        /// It exists but cannot be written, and why.
        case notWritable(directory: String, reason: String)
        /// It is private and writable.
        case usable(directory: String)
        /// It cannot be used (the store's own words).
        case refused(String)
    }

    /// The callback port.
    package enum Port: Sendable, Equatable {
        /// Port 0: the sign-in picks a free one.
        case anyFree
        /// This port is free.
        case free(UInt16)
        /// This port is taken, by whom when it can be told (`""`: it cannot).
        case inUse(UInt16, holder: String)
    }

    /// The clock, compared with a server's `Date` header.
    package enum Clock: Sendable, Equatable {
        /// There is no server to compare with.
        case noServer
        /// The server could not be reached.
        case unreachable(url: String, reason: String)
        /// It answered without a usable `Date` header.
        case noDate(url: String)
        /// This machine's clock minus the server's, in seconds.
        case offset(url: String, seconds: Double)
    }

    /// The server a sign-in would use, as `sfauth login` resolves the same options.
    package enum Server: Sendable, Equatable {
        /// The options name no server a sign-in could use: the configuration's own words.
        case unresolved(String)
        /// Endpoints sfauth knows without asking (GitHub, Salesforce, endpoints given one by one):
        /// the preset's name (or `nil`) and the authorization endpoint.
        case builtIn(preset: String?, authorizationEndpoint: String)
        /// An issuer whose metadata a sign-in reads, the endpoints configured over it, and what its
        /// metadata locations answered.
        case metadata(issuer: String, overrides: EndpointOverrides, answer: MetadataAnswer)
    }

    /// What an issuer's metadata locations (`DiscoveryDocument.locations(issuer:)`) answered, read
    /// in order as a sign-in reads them: a 404 sends it on to the next one, any other answer stops it.
    package enum MetadataAnswer: Sendable, Equatable {
        /// A location could not be reached.
        case unreachable(location: String, reason: String)
        /// Every location answered 404.
        case notFound(locations: [String])
        /// A location answered something other than 404.
        case response(location: String, HTTPResponse)
    }

    /// Creates facts.
    package init(
        session: TerminalSession, opener: String? = nil, browserFound: Bool? = nil, displayAnswers: Bool? = nil,
        keyring: SecretServiceAvailability, store: Store, port: Port, proxies: [String] = [], noProxy: String? = nil,
        clock: Clock, server: Server? = nil
    ) {
        self.session = session
        self.browserFound = browserFound
        self.displayAnswers = displayAnswers
        self.opener = opener
        self.keyring = keyring
        self.store = store
        self.port = port
        self.proxies = proxies
        self.noProxy = noProxy
        self.clock = clock
        self.server = server
    }
}
