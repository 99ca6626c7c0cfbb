import ArgumentParser
import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `sfauth logout`: revokes an account's tokens at the server and forgets them here.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke an account's tokens at the server and remove them from this machine.",
        discussion: """
            Revokes the refresh token (which ends its access tokens) and the access token (RFC 7009; \
            Salesforce's /services/oauth2/revoke), then removes the stored credentials. When the server \
            cannot be reached the credentials are still removed and the message says what could not be \
            revoked. Logging out of the default account makes the first remaining account the default. \
            For a confidential client, set SFAUTH_CLIENT_SECRET: logging out of one account then sends it \
            with the revocation, which some servers require.

            Examples:
              sfauth logout                 # the default account
              sfauth logout work            # by alias, username or identifier
              sfauth logout --all
              sfauth logout --local-only    # forget without contacting the server
            """
    )

    @Argument(help: ArgumentHelp("Alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    @Flag(help: "Log out of every stored account.")
    var all = false

    @Flag(help: "Only forget the credentials here; do not revoke them at the server.")
    var localOnly = false

    func validate() throws {
        if all && account != nil { throw ValidationError("Give an account or --all, not both.") }
    }

    func run() async throws {
        do throws(OAuthError) {
            let store = try StoreSetup.existingAccounts()
            let identifiers = try targets(in: store)
            if identifiers.isEmpty {
                StandardError.line("Not signed in; nothing to log out of.")
                return
            }
            let defaultBefore = try? store.defaultIdentifier()
            let environment = ProcessInfo.processInfo.environment
            // A confidential client's secret authenticates the revocation (some servers refuse it
            // otherwise) — only when one account is logged out: a secret is never sent to a server
            // it may not belong to.
            let secret = identifiers.count == 1 ? try SecretInput.clientSecret(file: nil, environment: environment) : nil
            // Short timeouts: logging out must not hang on an unreachable server.
            let revoker = TokenRevoker(httpClient: try HTTPSettings.client(environment: environment, connectTimeout: .seconds(5),
                                                                           totalTimeout: .seconds(15)),
                                       clientSecret: secret)
            var unreadable = [String]()
            for identifier in identifiers {
                // The account's refresh lock: a `sfauth token` refreshing it right now finishes first,
                // and its new tokens are the ones revoked — never written back after the logout.
                let lock = try await store.lock(account: identifier)
                defer { withExtendedLifetime(lock) {} }
                let loaded: OAuthCredentials?
                do {
                    loaded = try store.load(identifier: identifier)
                } catch .storage(let problem) where (try? store.identifiers())?.contains(identifier) == true {
                    // A damaged file: it holds no token we could revoke; forget it only when asked to.
                    guard localOnly else {
                        StandardError.line("sfauth: \(store.path(for: identifier)) cannot be read (\(problem)); `sfauth logout --local-only \(identifier)` removes it.")
                        unreadable.append(identifier)
                        continue
                    }
                    try store.removeFile(of: identifier)
                    StandardError.line("Removed the unreadable account file \(store.path(for: identifier)).")
                    continue
                }
                guard var credentials = loaded else { continue }
                var outcome = "only removed from this machine (--local-only)"
                if !localOnly {
                    // A keyring that cannot be used stops here, before anything is revoked or removed;
                    // a refresh token already gone from it only means there is less to revoke.
                    do {
                        credentials.refreshToken = try store.refreshToken(of: credentials)
                    } catch .loginRequired {
                        credentials.refreshToken = nil
                    }
                    outcome = await revoker.revoke(credentials).summary
                }
                do {
                    try store.delete(identifier: identifier)
                } catch {
                    // Say what happened at the server first: the tokens may be dead already. Then keep
                    // `sfauth token` from handing out a token the server no longer accepts.
                    if !localOnly {
                        StandardError.line("\(credentials.displayLabel) at the server: \(outcome); but it could not be removed here.")
                        var stored = credentials
                        stored.status = .loginRequired
                        _ = try? store.update(stored)
                    }
                    throw error
                }
                StandardError.line("Logged out of \(credentials.displayLabel): \(outcome).")
            }
            if let next = try? store.defaultIdentifier(), next != defaultBefore, let credentials = try? store.load(identifier: next) {
                StandardError.line("The default account is now \(credentials.displayLabel).")
            }
            if !unreadable.isEmpty {
                throw OAuthError.storage("\(unreadable.count) account file\(unreadable.count == 1 ? "" : "s") could not be read and \(unreadable.count == 1 ? "was" : "were") kept")
            }
        } catch {
            throw CommandFailure(error)
        }
    }

    private func targets(in store: FileCredentialStore) throws(OAuthError) -> [String] {
        if all { return try store.identifiers() }
        if let account {
            // A damaged file is named by its identifier (`sfauth accounts` shows it).
            if try store.identifiers().contains(account) { return [account] }
            return [try AccountResolver(store: store).identifier(for: account)]
        }
        return try store.defaultIdentifier().map { [$0] } ?? []
    }
}
