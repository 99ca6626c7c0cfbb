import ArgumentParser
import SFAuth
import SFAuthCLI
import FoundationEssentials

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
            let book = AccountBook(store: store)
            for identifier in identifiers {
                // A damaged file holds no token to revoke: it is forgotten only when asked to.
                switch try await book.forget(identifier, revokingWith: localOnly ? nil : revoker, removingUnreadable: localOnly) {
                case .notStored:
                    continue
                case .unreadableKept(let path, let problem):
                    let reason = if case .storage(let detail) = problem { detail.text } else { "\(problem)" }
                    StandardError.line("sfauth: \(path) cannot be read (\(reason)); `sfauth logout --local-only \(identifier)` removes it.")
                    unreadable.append(identifier)
                case .unreadableRemoved(let path):
                    StandardError.line("Removed the unreadable account file \(path).")
                case .forgotten(let credentials, let revocation):
                    let outcome = revocation?.summary ?? "only removed from this machine (--local-only)"
                    StandardError.line("Logged out of \(credentials.displayLabel): \(outcome).")
                case .revokedButKept(let credentials, let revocation, let error):
                    // Say what happened at the server first: the tokens may be dead already.
                    StandardError.line("\(credentials.displayLabel) at the server: \(revocation.summary); but it could not be removed here.")
                    throw error
                }
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
