import Dispatch
import FoundationEssentials
import SFAuthCore
import Synchronization

/// A token as the proxy needs it: the value it sends and when it stops being usable.
package struct ProxyToken: Sendable, Equatable {
    /// The access token, sent as `Authorization: Bearer <value>`.
    package var value: String
    /// When it expires; `nil` when unknown or never.
    package var expiry: Date?

    /// A token.
    package init(value: String, expiry: Date?) {
        self.value = value
        self.expiry = expiry
    }
}

/// Where the proxy gets its tokens: the one seam between the proxy and the token lifecycle.
/// `renew` asks for a new token (the upstream rejected the last one); otherwise a usable stored
/// token is fine. The command builds it from `CommandContext.accessToken`, exactly as `sfauth token`
/// gets its token.
package typealias ProxyTokenProvider = @Sendable (_ renew: Bool) async throws(OAuthError) -> ProxyToken

/// Keeps the proxy's token in memory while it is usable, so a request costs no store read, and asks
/// the provider — once, however many connections wait — when it is not: at the first request, near
/// its expiry, or after the upstream rejected it.
package final class ProxyTokenCache: Sendable {
    /// How long before its stated expiry a cached token is no longer used: the provider then renews
    /// it (with its own leeway, `SFAUTH_TOKEN_LEEWAY`) before the upstream would reject it.
    static let expiryMargin: TimeInterval = 30

    private let provider: ProxyTokenProvider
    /// The shortest time between two forced renewals.
    static let minimumRenewalInterval: TimeInterval = 10

    private let cached = Mutex<ProxyToken?>(nil)
    private let lastRenewal = Mutex<Date?>(nil)
    /// A token the upstream rejected when its request could not be sent again: the next request
    /// renews it instead of reusing it (or reading the same one from the store).
    private let marked = Mutex<String?>(nil)
    /// Held while the provider is asked, so concurrent connections share one fetch or refresh.
    private let fetching = Mutex<Void>(())
    private let now: @Sendable () -> Date

    /// A cache over `provider`; `now` is the clock (tests pass their own).
    package init(provider: @escaping ProxyTokenProvider, now: @escaping @Sendable () -> Date = { Date() }) {
        self.provider = provider
        self.now = now
    }

    /// A token to send: the cached one while it is usable and not `rejected`; otherwise the
    /// provider's (renewed when `rejected` is the token the cache holds). Blocks the calling thread
    /// (a connection's own thread, never one of Swift's pool) while the provider works.
    package func token(rejected: String? = nil) -> Result<String, OAuthError> {
        let rejected = rejected ?? marked.withLock { $0 }
        if let usable = usableToken(rejected: rejected) { return .success(usable) }
        return fetching.withLock { _ in
            // Another connection may have fetched or renewed it while this one waited.
            if let usable = usableToken(rejected: rejected) { return .success(usable) }
            let renew = rejected != nil && cached.withLock { $0 == nil || $0?.value == rejected }
            // An upstream that rejects every token (a wrong audience, say) must not make each request
            // a refresh at the authorization server: one forced renewal per interval; meanwhile the
            // current token is sent, and the upstream's 401 reaches the client.
            if renew, let last = lastRenewal.withLock({ $0 }), now().timeIntervalSince(last) < Self.minimumRenewalInterval,
                let current = cached.withLock({ $0?.value })
            {
                return .success(current)
            }
            if renew { lastRenewal.withLock { $0 = now() } }
            let result = Self.wait { () async throws(OAuthError) -> ProxyToken in try await self.provider(renew) }
            switch result {
            case .success(let token):
                cached.withLock { $0 = token }
                if renew { marked.withLock { $0 = nil } }
                return .success(token.value)
            case .failure(let error):
                return .failure(error)
            }
        }
    }

    /// Marks `token` rejected, so the next request renews it (after an upstream 401 that could not
    /// be retried).
    package func invalidate(_ token: String) {
        marked.withLock { $0 = token }
    }

    private func usableToken(rejected: String?) -> String? {
        cached.withLock { token -> String? in
            guard let token, token.value != rejected else { return nil }
            if let expiry = token.expiry, now() >= expiry.addingTimeInterval(-Self.expiryMargin) { return nil }
            return token.value
        }
    }

    /// Runs `operation` as a task and blocks until it finishes.
    private static func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws(OAuthError) -> T) -> Result<T, OAuthError> {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, OAuthError>?>(nil)
        Task {
            let outcome: Result<T, OAuthError>
            do throws(OAuthError) { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure(.localFault("the token task ended without a result"))
    }
}
