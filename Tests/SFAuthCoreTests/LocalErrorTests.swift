import SFAuthCore
import Testing

/// The errors of this machine's own parts: a port someone else holds (typed, so callers match the
/// case, not the words) and local faults, which are neither configuration nor server.
@Suite struct LocalErrorTests {
    @Test func aPortInUseSaysWhoHoldsItAndIsForTheUserToFix() {
        let held = OAuthError.portInUse(port: 1717, address: "127.0.0.1", heldBy: "sf (pid 4242)")
        #expect(
            held.description == "Configuration error: port 1717 on 127.0.0.1 is already in use, held by sf (pid 4242): "
                + "probably another sign-in is waiting on it; finish or cancel that one, then try again")
        #expect(held.recovery == .fixConfiguration)
        // Another sign-in is named only when the holder is one (issue 17 §15).
        let unknown = OAuthError.portInUse(port: 1717, address: "[::1]", heldBy: nil)
        #expect(
            unknown.description == "Configuration error: port 1717 on [::1] is already in use. "
                + "Stop the program that holds it, or sign in on another port (registering that redirect URI where the server matches it exactly).")
        let other = OAuthError.portInUse(port: 8080, address: "127.0.0.1", heldBy: "python3 (pid 7)")
        #expect(
            other.description(advising: { _ in "Use --port." })
                == "Configuration error: port 8080 on 127.0.0.1 is already in use, held by python3 (pid 7). Use --port.")
    }

    @Test func aLocalFaultIsItsOwnRecovery() {
        let fault = OAuthError.localFault("the listener failed: poll: Too many open files.")
        #expect(fault.recovery == .localFault)
        #expect(
            fault.description == "Local failure: the listener failed: poll: Too many open files. "
                + "Try again; if it persists, check this machine's limits (open files, threads, memory).")
    }
}
