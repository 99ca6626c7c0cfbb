import FoundationEssentials
import SFAuthModel

/// The one stored-token lookup of both programs: the token to hand out as it is — for
/// `--account NAME` or the default account — with no network, no keyring and no write. The front
/// end answers the credential hot paths with it alone; the main program makes it its first step
/// (reuse) and goes on to renew, sign in again or explain only when it finds nothing usable, so
/// the two cannot disagree about when a stored token is handed out.
///
/// The checks, in order; the first that does not pass decides:
/// 1. a token supplied in the environment (`<PREFIX>_ACCESS_TOKEN`) wins over anything stored;
/// 2. the settings the main program reads on this path are ones it accepts — storage mode,
///    credentials directory, HTTP timeout, leeway, assumed lifetime — (it reports a refused one);
/// 3. the store is opened once and trusted (`StoreDirectory`);
/// 4. the account is selected: the name by `AccountFiles.select`, else the `default` file's;
/// 5. its record is read and decoded;
/// 6. its access token is usable now (`TokenFreshness`).
package enum StoredTokenLookup {
    /// What the lookup found.
    package enum Outcome: Equatable {
        /// A token to hand out as it is.
        case usable(IssuedToken)
        /// Nothing to hand out without the main program's help: why.
        case notFound(Miss)
    }

    /// Why no token can be handed out as it is — for tests and for the reader; every case means
    /// "the main program answers".
    package enum Miss: Equatable {
        /// A setting the main program would refuse.
        case refusedSetting
        /// No store directory (nothing was ever stored).
        case noStore
        /// The store directory is not private to this user.
        case untrustedStore
        /// A file of the store cannot be read, or an account's record cannot be decoded.
        case unreadable
        /// No account is the default.
        case noDefault
        /// The name selects no account.
        case noAccountNamed
        /// The name selects several accounts.
        case severalAccountsNamed
        /// The name index cannot tell (missing or stale): the main program rebuilds it.
        case indexCannotTell
        /// The account is selected, but its token must be renewed first (or it must sign in again).
        case notUsable(identifier: String)
    }

    /// Looks up the token of `name` (alias, username, email or identifier; `nil`: the default
    /// account) with `settings` (the app's variables) at `now` — or, with `resource`, of the account
    /// bound to that protected resource exactly as stored (another spelling of it is the main
    /// program's to resolve).
    package static func lookUp(
        account name: String?, resource: String? = nil, settings: EnvironmentSettings, app: AppIdentity, now: Date
    ) -> Outcome {
        if let resource {
            guard name == nil else { return .notFound(.noAccountNamed) }  // both given: the main program checks them
            return lookUp(account: resource, settings: settings, app: app, now: now, bindingRequired: resource)
        }
        return lookUp(account: name, settings: settings, app: app, now: now, bindingRequired: nil)
    }

    /// The lookup, the account selected required to be bound to `bindingRequired` when given.
    private static func lookUp(
        account name: String?, settings: EnvironmentSettings, app: AppIdentity, now: Date, bindingRequired: String?
    ) -> Outcome {
        if let supplied = settings.suppliedToken { return .usable(IssuedToken(supplied)) }
        guard accepts({ () throws(OAuthError) in _ = try settings.storageMode() }),
            let path = try? settings.credentialsDirectory(app: app),
            accepts({ () throws(OAuthError) in _ = try settings.httpTimeout() }),
            let freshness = try? TokenFreshness(settings: settings)
        else { return .notFound(.refusedSetting) }
        let opened: Directory?
        do { opened = try StoreDirectory.open(path) } catch .untrusted { return .notFound(.untrustedStore) } catch { return .notFound(.unreadable) }
        guard let store = opened else { return .notFound(.noStore) }
        guard let files = try? AccountFiles(store: store) else { return .notFound(.unreadable) }
        let identifier: String
        var credentials: OAuthCredentials?
        if let name {
            switch files.select(name) {
            case .one(let selected, let record): (identifier, credentials) = (selected, record)
            case .none: return .notFound(.noAccountNamed)
            case .several: return .notFound(.severalAccountsNamed)
            case .unknown: return .notFound(.indexCannotTell)
            }
        } else {
            do {
                guard let named = try files.defaultIdentifier() else { return .notFound(.noDefault) }
                identifier = named
            } catch {
                return .notFound(.unreadable)
            }
        }
        if credentials == nil {
            guard let bytes = try? files.record(of: identifier), let record = try? CredentialFile.decode(bytes) else {
                return .notFound(.unreadable)
            }
            credentials = record
        }
        if let bindingRequired, credentials?.resource != bindingRequired { return .notFound(.noAccountNamed) }
        guard let credentials, freshness.isUsable(credentials, at: now) else { return .notFound(.notUsable(identifier: identifier)) }
        return .usable(IssuedToken(credentials, assumedLifetime: freshness.assumedLifetime))
    }

    /// Whether `check` passes. (Not `try?`, which would flatten an optional setting's `nil` into failure.)
    private static func accepts(_ check: () throws(OAuthError) -> Void) -> Bool {
        do { try check() } catch { return false }
        return true
    }
}
