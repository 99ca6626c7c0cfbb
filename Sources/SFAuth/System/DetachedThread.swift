import Glibc

/// The one way the library starts a thread of its own: a detached POSIX thread that runs a closure.
///
/// Work that blocks — a libcurl transfer, a browser command being waited for, the loopback
/// listener's `poll()` loop, a read of standard input — runs on such a thread, so it never occupies
/// one of the few threads of Swift's cooperative pool.
enum DetachedThread {
    /// No thread could be created: `pthread_create`'s error (`EAGAIN` when the process or the
    /// system is out of threads).
    struct StartFailure: Error, CustomStringConvertible {
        /// The `errno`-style code `pthread_create` returned.
        var code: Int32
        /// E.g. `Resource temporarily unavailable`.
        var description: String { GlibcExtras.errorText(code) }
    }

    /// Holds the closure while it crosses into the new thread as a raw pointer.
    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new detached thread. `body` is handed over (`sending`): what it captures
    /// belongs to the new thread from now on.
    ///
    /// - Throws: `StartFailure` when no thread could be created; `body` does not run then.
    static func start(_ body: sending @escaping () -> Void) throws(StartFailure) {
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Work>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            throw StartFailure(code: result)
        }
    }
}
