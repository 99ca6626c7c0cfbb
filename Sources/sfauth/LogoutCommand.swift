import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `sfauth logout`: forgets the default account's stored credentials.
struct LogoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Forget the stored credentials of the default account.",
        discussion: """
            Removes the credentials from this machine. The next account stored (if any) becomes the default.

            Example:
              sfauth logout
            """
    )

    func run() throws {
        do throws(OAuthError) {
            let store = try FileCredentialStore(environment: ProcessInfo.processInfo.environment)
            guard let identifier = try store.defaultIdentifier() else {
                StandardError.line("Not signed in; nothing to forget.")
                return
            }
            let name = (try? store.load(identifier: identifier))??.username ?? identifier
            try store.delete(identifier: identifier)
            StandardError.line("Signed out of \(name): the stored credentials were removed from this machine.")
        } catch {
            throw CommandFailure(error)
        }
    }
}
