import ArgumentParser
import SFAuth
import SFAuthCLI

/// `sfauth logout`: revokes an account's tokens at the server and forgets them here.
struct LogoutCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Revoke an account's tokens at the server and remove them from this machine.",
        discussion: """
            Revokes the refresh token (which ends its access tokens) and the access token (RFC 7009; \
            Salesforce's /services/oauth2/revoke), then removes the stored credentials. When the server \
            cannot be reached the credentials are still removed and the message says what could not be \
            revoked, and sfauth exits with 6 (5 when the server refused). Logging out of the default account makes the first remaining account the default. \
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

    func run(in context: CommandContext) async throws {
        let store = try context.accountStore()
        let identifiers = try targets(in: store)
        if identifiers.isEmpty {
            StandardError.line("Not signed in; nothing to log out of.")
            return
        }
        let defaultBefore = try? store.defaultIdentifier()
        let revoker = localOnly ? nil : try Self.revoker(forOneAccount: identifiers.count == 1, in: context)
        var outcomes = [Outcome]()
        for identifier in identifiers {
            // A damaged file holds no token to revoke: it is forgotten only when asked to.
            let farewell = try await AccountBook(store: store).forget(identifier, revokingWith: revoker, removingUnreadable: localOnly)
            outcomes.append(try Self.report(farewell, of: identifier))
        }
        if let next = try? store.defaultIdentifier(), next != defaultBefore, let credentials = try? store.load(identifier: next) {
            StandardError.line("The default account is now \(credentials.displayLabel).")
        }
        let unreadable = outcomes.count(where: { $0 == .unreadableKept })
        if unreadable > 0 {
            throw OAuthError.storage(
                "\(unreadable) account file\(unreadable == 1 ? "" : "s") could not be read and \(unreadable == 1 ? "was" : "were") kept")
        }
        let unrevoked = outcomes.compactMap { if case .notRevoked(let status) = $0 { status } else { nil } }
        if let status = unrevoked.first {
            let whose = unrevoked.count == 1 ? "that account's tokens" : "the tokens of \(unrevoked.count) accounts"
            throw CommandFailure(
                "the server did not confirm the revocation of \(whose); they are gone from here, but may work until they expire: "
                    + "revoke them at the server (its security or connected-apps page) if they must not",
                status: status)
        }
    }

    /// What became of one account, for the exit status.
    private enum Outcome: Equatable {
        /// Gone here, and its tokens ended at the server (or nothing was asked of it).
        case done
        /// Gone here, but the server did not confirm that its tokens ended: refused (5), or not
        /// reached or not understood (6).
        case notRevoked(ExitStatus)
        /// Its unreadable file was kept.
        case unreadableKept
    }

    /// Says what became of one account.
    ///
    /// - Throws: the error that kept an account whose tokens the server has revoked.
    private static func report(_ farewell: AccountBook.Farewell, of identifier: String) throws(OAuthError) -> Outcome {
        switch farewell {
        case .notStored:
            return .done
        case .unreadableKept(let path, let problem):
            let reason = if case .storage(let detail) = problem { detail.text } else { "\(problem)" }
            StandardError.line("sfauth: \(path) cannot be read (\(reason)); `sfauth logout --local-only \(identifier)` removes it.")
            return .unreadableKept
        case .unreadableRemoved(let path):
            StandardError.line("Removed the unreadable account file \(path).")
            return .done
        case .forgottenLeavingSecret(let credentials, let item, let reason):
            StandardError.line(
                "Removed \(credentials.displayLabel) from this machine; its refresh token is still in \(item): "
                    + "the keyring cannot be reached now (\(reason)).")
            return .done
        case .forgotten(let credentials, let revocation):
            let outcome = revocation?.summary ?? "only removed from this machine (--local-only)"
            StandardError.line("Logged out of \(credentials.displayLabel): \(outcome).")
            // A server that has no revocation endpoint was asked nothing: that is not a failure.
            guard let revocation, revocation.endpoint != nil, let primary = revocation.entries.first, !revocation.isRevokedAtServer else {
                return .done
            }
            if case .failed(let error) = primary.status { return .notRevoked(ExitStatus(error)) }
            return .notRevoked(.network)
        case .revokedButKept(let credentials, let revocation, let error):
            // Say what happened at the server first: the tokens may be dead already.
            StandardError.line("\(credentials.displayLabel) at the server: \(revocation.summary); but it could not be removed here.")
            throw error
        }
    }

    /// The revoker: short timeouts, since logging out must not hang on an unreachable server. A
    /// confidential client's secret authenticates the revocation (some servers refuse it
    /// otherwise) — only when one account is logged out: a secret is never sent to a server it may
    /// not belong to.
    private static func revoker(forOneAccount: Bool, in context: CommandContext) throws(OAuthError) -> TokenRevoker {
        TokenRevoker(
            httpClient: try context.httpClient(connectTimeout: .seconds(5), totalTimeout: .seconds(15)),
            clientSecret: forOneAccount ? context.clientSecret : nil)
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
