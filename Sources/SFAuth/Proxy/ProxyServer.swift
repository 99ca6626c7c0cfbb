import Dispatch
import Glibc
import SFAuthCore
import Synchronization

/// A token-injecting reverse proxy on loopback (`sfauth proxy`): every request a client sends to it
/// goes to one upstream origin with a fresh `Authorization: Bearer` token, for tools that take a base
/// URL but read a token once and then run for hours.
///
/// Safe by construction rather than by configuration: it listens on loopback or on a 0600 Unix
/// socket only; serves only the user it runs as (`/proc/net/tcp` or `SO_PEERCRED`); forwards only
/// origin-form paths under the upstream's base path (no CONNECT, no absolute-form to elsewhere, no
/// dot segments); and refuses what a web page could make a browser send (a foreign `Host`, a
/// cross-site `Origin` or `Sec-Fetch-Site`). A thread per connection, at most
/// `Configuration.maxConnections` at once.
package final class ProxyServer: Sendable {
    /// What the proxy does, fixed at start.
    package struct Configuration: Sendable {
        /// Where requests go.
        package var upstream: ProxyUpstream
        /// Where the proxy listens.
        package var listen: ProxyListenAddress
        /// Request bodies up to this many bytes are kept to be sent again after a 401; larger ones
        /// are streamed and not retried. Default: 1 MiB.
        package var maxReplayBody: Int = 1 << 20
        /// One line per request on standard error. Default: off (errors only).
        package var verbose = false
        /// Connections served at once; more are answered 503. Default: 64.
        package var maxConnections = 64
        /// The largest request head accepted; a larger one is answered 431. Default: 64 KiB.
        package var maxHeadBytes = 64 << 10
        /// How long a client may stay silent (between requests, or within one) or not read. Default: 120 s.
        package var idleTimeoutSeconds = 120
        /// The longest wait for a connection to the upstream; then 502. Default: 10 s.
        package var connectTimeoutMilliseconds = 10_000
        /// A PEM file of CA certificates for the upstream's TLS, or `nil` for the system's.
        package var caBundlePath: String?

        /// A configuration with the defaults documented on each property.
        package init(upstream: ProxyUpstream, listen: ProxyListenAddress) {
            self.upstream = upstream
            self.listen = listen
        }
    }

    private let service: ProxyService
    private struct State {
        var listeners: [Int32] = []
        var wake: (read: Int32, write: Int32)?
        var stopped = false
    }
    private let state = Mutex(State())
    private let acceptLoopEnded = DispatchSemaphore(value: 0)

    /// A proxy that gets its tokens from `tokens` and words a failure to get one with `describe`
    /// (the program's own words, naming its sign-in command).
    package init(configuration: Configuration, tokens: @escaping ProxyTokenProvider, describe: @escaping @Sendable (OAuthError) -> String) {
        service = ProxyService(configuration: configuration, tokens: ProxyTokenCache(provider: tokens), describe: describe)
    }

    /// Loads libcurl, listens, and starts accepting connections on a thread of its own. Returns the
    /// base URL clients use: `http://127.0.0.1:PORT` (the port bound, when 0 was asked), or `unix:PATH`.
    ///
    /// - Throws: `OAuthError.configuration` when the upstream may not be used or the address is taken
    ///   (`.portInUse`); `.localFault` when libcurl, a socket, a pipe or the thread cannot be had.
    package func start() throws(OAuthError) -> String {
        let upstream = service.configuration.upstream
        do throws(HTTPTransportError) {
            _ = try HTTPURLPolicy.endpoint(for: upstream.origin + "/", method: "GET")
            try CurlTransfer.loadLibcurl(names: ["libcurl.so.4", "libcurl-gnutls.so.4"])
        } catch {
            throw error.kind == .insecureURL ? .configuration(Problem(error.message)) : .localFault(error.message)
        }
        let fds: [Int32]
        let url: String
        switch service.configuration.listen {
        case .tcp(let host, let port):
            let bound: (fds: [Int32], port: UInt16)
            do {
                bound = try LoopbackSockets.bind(host: host, port: port)
            } catch {
                // The login's words would suggest another callback port; here it is --listen.
                if case .portInUse(let port, let address, let heldBy) = error {
                    throw .configuration(
                        "port \(port) on \(address) is already in use\(heldBy.map { ", held by \($0)" } ?? ""); choose another --listen port, or leave --listen out for a free one"
                    )
                }
                throw error
            }
            fds = bound.fds
            service.setPort(bound.port)
            url = "http://\(host):\(bound.port)"
        case .unix(let path):
            fds = [try UnixSocketListener.bind(path: path)]
            url = "unix:\(path)"
        }
        guard let wake = GlibcExtras.closeOnExecPipe() else {
            fds.forEach(LoopbackSockets.shutdownAndClose)
            throw .localFault("cannot create a pipe: \(GlibcExtras.errorText(errno))")
        }
        state.withLock {
            $0.listeners = fds
            $0.wake = wake
        }
        let service = self.service
        let ended = acceptLoopEnded
        do {
            try DetachedThread.start {
                Self.acceptLoop(listeners: fds, wake: wake.read, service: service)
                ended.signal()
            }
        } catch {
            closeAll()
            throw .localFault("cannot start a thread: \(error)")
        }
        return url
    }

    /// Stops accepting, closes the listening sockets and removes the Unix socket file. Connections
    /// being served are not waited for: the process is about to exit. Safe to call more than once.
    package func stop() {
        let wake = state.withLock { state -> Int32? in
            if state.stopped { return nil }
            state.stopped = true
            return state.wake?.write
        }
        guard let wake else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wake, &byte, 1)
        _ = acceptLoopEnded.wait(timeout: .now() + .seconds(2))
        closeAll()
    }

    private func closeAll() {
        let (fds, wake) = state.withLock { ($0.listeners, $0.wake) }
        fds.forEach(LoopbackSockets.shutdownAndClose)
        if let wake {
            close(wake.read)
            close(wake.write)
        }
        if case .unix(let path) = service.configuration.listen { UnixSocketListener.remove(path: path) }
        state.withLock {
            $0.listeners = []
            $0.wake = nil
        }
    }

    /// Accepts connections until the wake pipe is written to, and serves each on a thread of its own.
    private static func acceptLoop(listeners: [Int32], wake: Int32, service: ProxyService) {
        var polled = (listeners + [wake]).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let ready = poll(&polled, nfds_t(polled.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                service.log.error("stopped accepting connections: poll failed: \(GlibcExtras.errorText(errno))")
                return
            }
            if polled.last!.revents != 0 { return }
            for index in listeners.indices where polled[index].revents != 0 {
                let fd = GlibcExtras.acceptCloseOnExecNonBlocking(listeners[index])
                if fd >= 0 { accepted(fd, service: service) }
            }
        }
    }

    private static func accepted(_ fd: Int32, service: ProxyService) {
        guard service.enter() else {
            service.log.error("refused a connection: \(service.configuration.maxConnections) connections are open already (503)")
            let stream = ProxyClientStream(fd: fd, timeoutSeconds: 1)
            ProxyResponseWriter.answer(503, "too many connections", to: stream, keepAlive: false, method: "GET")
            stream.close()
            return
        }
        do {
            try DetachedThread.start {
                defer { service.leave() }
                let stream = ProxyClientStream(fd: fd, timeoutSeconds: service.configuration.idleTimeoutSeconds)
                guard service.isOwnUser(fd) else {
                    service.log.error("refused a connection from another user (403)")
                    ProxyResponseWriter.answer(403, "connections from other users are refused", to: stream, keepAlive: false, method: "GET")
                    stream.close()
                    return
                }
                ProxyConnection(stream: stream, service: service).run()
            }
        } catch {
            service.leave()
            service.log.error("refused a connection: cannot start a thread (\(error))")
            LoopbackSockets.shutdownAndClose(fd)
        }
    }
}

/// What every connection of a proxy shares.
final class ProxyService: Sendable {
    let configuration: ProxyServer.Configuration
    let tokens: ProxyTokenCache
    let log: ProxyLog
    let upstreamIsLoopback: Bool
    private let describe: @Sendable (OAuthError) -> String
    private let port = Mutex<UInt16>(0)
    private let open = Mutex<Int>(0)
    private let ownUID = getuid()

    init(configuration: ProxyServer.Configuration, tokens: ProxyTokenCache, describe: @escaping @Sendable (OAuthError) -> String) {
        self.configuration = configuration
        self.tokens = tokens
        self.describe = describe
        log = ProxyLog(verbose: configuration.verbose)
        let host =
            configuration.upstream.authority.hasPrefix("[")
            ? String(configuration.upstream.authority.prefix(while: { $0 != "]" }).dropFirst())
            : String(configuration.upstream.authority.prefix(while: { $0 != ":" }))
        upstreamIsLoopback = EndpointURL.isLoopback(host: host)
    }

    func setPort(_ value: UInt16) { port.withLock { $0 = value } }

    /// The `Host` values accepted: the loopback names with the bound port; `nil` on a Unix socket.
    var authorities: [String]? {
        if case .unix = configuration.listen { return nil }
        return ProxyRules.acceptedAuthorities(port: port.withLock { $0 })
    }

    /// Counts a connection in; `false` when the limit is reached.
    func enter() -> Bool {
        open.withLock { count in
            guard count < configuration.maxConnections else { return false }
            count += 1
            return true
        }
    }

    func leave() { open.withLock { $0 -= 1 } }

    /// Whether the peer of `fd` runs as this process's user.
    func isOwnUser(_ fd: Int32) -> Bool {
        let uid: UInt32? =
            switch configuration.listen {
            case .unix: PeerCredentials.unixPeerUID(fd)
            case .tcp: PeerCredentials.tcpPeerUID(fd)
            }
        return uid == ownUID
    }

    /// The status and text a client gets when no token can be had: 503 naming the sign-in command
    /// when a sign-in is needed (or the configuration or store is wrong), 502 when the
    /// authorization server could not be reached.
    func tokenFailure(_ error: OAuthError) -> (status: Int, text: String) {
        switch error {
        case .network, .invalidServerResponse, .timedOut: return (502, "cannot renew the token: " + describe(error))
        default: return (503, "no token: " + describe(error))
        }
    }
}
