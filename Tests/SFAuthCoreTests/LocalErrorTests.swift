import SFAuthCore
import Testing

/// The errors of this machine's own parts: a port someone else holds (typed, so callers match the
/// case, not the words) and local faults, which are neither configuration nor server.
@Suite struct LocalErrorTests {
    @Test func aPortInUseSaysWhoHoldsItAndIsForTheUserToFix() {
        let held = OAuthError.portInUse(port: 1717, address: "127.0.0.1", heldBy: "sf (pid 4242)")
        #expect(held.description == "Configuration error: port 1717 on 127.0.0.1 is already in use, held by sf (pid 4242): "
            + "probably another sign-in is waiting on it; finish or cancel that one, then try again")
        #expect(held.recovery == .fixConfiguration)
        let unknown = OAuthError.portInUse(port: 1717, address: "[::1]", heldBy: nil)
        #expect(unknown.description.hasPrefix("Configuration error: port 1717 on [::1] is already in use: probably"))
    }

    @Test func aLocalFaultIsItsOwnRecovery() {
        let fault = OAuthError.localFault("the listener failed: poll: Too many open files.")
        #expect(fault.recovery == .localFault)
        #expect(fault.description == "Local failure: the listener failed: poll: Too many open files. "
            + "Try again; if it persists, check this machine's limits (open files, threads, memory).")
    }
}
