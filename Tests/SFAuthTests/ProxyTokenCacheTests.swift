import FoundationEssentials
import Synchronization
import Testing

@testable import SFAuth

/// The proxy's token cache over a counting provider: one fetch while a token is usable, a renewal
/// when the upstream rejects it, and no renewal storm when the upstream rejects every token.
@Suite struct ProxyTokenCacheTests {
    final class Provider: Sendable {
        let calls = Mutex<[Bool]>([])
        let lifetime: TimeInterval?
        let clock: Clock
        init(lifetime: TimeInterval?, clock: Clock) {
            self.lifetime = lifetime
            self.clock = clock
        }
        func token(renew: Bool) throws(OAuthError) -> ProxyToken {
            let count = calls.withLock { calls in
                calls.append(renew)
                return calls.count
            }
            return ProxyToken(value: "token-\(count)", expiry: lifetime.map { clock.now.addingTimeInterval($0) })
        }
    }

    final class Clock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_000_000))
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    func cache(lifetime: TimeInterval?) -> (ProxyTokenCache, Provider, Clock) {
        let clock = Clock()
        let provider = Provider(lifetime: lifetime, clock: clock)
        let cache = ProxyTokenCache(provider: { renew throws(OAuthError) in try provider.token(renew: renew) }, now: { clock.now })
        return (cache, provider, clock)
    }

    @Test func reusesAUsableTokenAndRenewsNearItsExpiry() throws {
        let (cache, provider, clock) = cache(lifetime: 300)
        #expect(try cache.token().get() == "token-1")
        #expect(try cache.token().get() == "token-1")
        clock.advance(260)  // 40 s left: still used
        #expect(try cache.token().get() == "token-1")
        clock.advance(20)  // 20 s left: within the margin, asked again (not forced: the store decides)
        #expect(try cache.token().get() == "token-2")
        #expect(provider.calls.withLock { $0 } == [false, false])
    }

    @Test func aRejectedTokenIsRenewedOnceForEveryoneWaiting() throws {
        let (cache, provider, clock) = cache(lifetime: nil)
        #expect(try cache.token().get() == "token-1")
        #expect(try cache.token(rejected: "token-1").get() == "token-2")
        // A second connection that saw the same token rejected gets the renewed one, no new renewal.
        #expect(try cache.token(rejected: "token-1").get() == "token-2")
        #expect(provider.calls.withLock { $0 } == [false, true])
        // A rejected token that could not be retried is renewed by the next request, but not again
        // within the interval however often the upstream rejects.
        clock.advance(11)
        cache.invalidate("token-2")
        #expect(try cache.token().get() == "token-3")
        cache.invalidate("token-3")
        #expect(try cache.token().get() == "token-3")
        #expect(try cache.token(rejected: "token-3").get() == "token-3")
        clock.advance(10)
        #expect(try cache.token(rejected: "token-3").get() == "token-4")
        #expect(provider.calls.withLock { $0 } == [false, true, true, true])
    }

    @Test func aFailureIsReportedAndNotCached() throws {
        let attempts = Mutex(0)
        let cache = ProxyTokenCache(provider: { _ throws(OAuthError) in
            let attempt = attempts.withLock { count in
                count += 1
                return count
            }
            if attempt == 1 { throw .loginRequired("Not signed in.") }
            return ProxyToken(value: "later", expiry: nil)
        })
        guard case .failure(.loginRequired) = cache.token() else {
            Issue.record("expected loginRequired")
            return
        }
        #expect(try cache.token().get() == "later")
    }
}
