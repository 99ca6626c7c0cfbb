import Glibc

/// Runs blocking work (a libcurl transfer, loading libcurl) on a thread of its own, so it never
/// occupies a thread of Swift's cooperative pool.
enum DedicatedThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Starts a detached thread running `body`. Returns `false` when no thread could be created
    /// (then `body` does not run).
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(&thread, &attributes, { raw in
            guard let raw else { return nil }
            Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<Work>.fromOpaque(context).release()
            return false
        }
        return true
    }
}
