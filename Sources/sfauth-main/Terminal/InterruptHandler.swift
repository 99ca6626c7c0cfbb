import Dispatch
import Glibc

/// Turns Ctrl-C (SIGINT) and SIGTERM into a call to `onInterrupt` instead of killing the process,
/// so a login in progress closes its listener and exits with the "cancelled" status.
final class InterruptHandler: @unchecked Sendable {  // immutable after init; DispatchSource is thread-safe
    private let sources: [any DispatchSourceSignal]

    init(onInterrupt: @escaping @Sendable () -> Void) {
        let registered = DispatchGroup()
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: onInterrupt)
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            return source
        }
        // libdispatch installs its signal handler asynchronously, after resume(): until then the
        // signal is ignored (SIG_IGN above) and a Ctrl-C would be lost — the login would go on
        // waiting. Return only once both are armed (a bound, in case registration never reports).
        _ = registered.wait(timeout: .now() + .seconds(2))
    }

    /// Restores the default signal handling.
    func stop() {
        for source in sources {
            source.cancel()
            signal(Int32(source.handle), SIG_DFL)
        }
    }
}
