import FoundationEssentials
import Glibc
import SFAuthModel

/// `sfauth token` with a usable stored token, answered without the main program.
enum CachedToken {
    /// Prints the token for `sfauth token` and returns 0 when that is the whole answer: the command
    /// is `token` or `token --account NAME`, and `SFAUTH_ACCESS_TOKEN` is set, or the account's stored
    /// token is usable. `nil` in every other case — other arguments, a setting the main program would
    /// refuse, a directory it would not trust, a file it could not read, a name that selects no
    /// account or several, a token to refresh — so that the main program answers, exactly as it would
    /// have without this shortcut.
    static func answer(arguments: [String]) -> Int32? {
        guard let request = Request(arguments) else { return nil }
        let settings = EnvironmentSettings(prefix: "SFAUTH", environment: ProcessInfo.processInfo.environment)
        if let supplied = settings.suppliedToken {
            print(supplied.accessToken)
            return 0
        }
        guard let credentials = usableAccount(request.account, settings) else { return nil }
        print(credentials.accessToken)
        return 0
    }

    /// What was asked: `token`, `token --account NAME` or `token --account=NAME`.
    private struct Request {
        /// The account named; `nil` for the default account.
        var account: String?

        init?(_ arguments: [String]) {
            switch arguments.count {
            case 1 where arguments[0] == "token":
                account = nil
            case 2 where arguments[0] == "token" && arguments[1].hasPrefix("--account="):
                account = String(arguments[1].dropFirst("--account=".count))
            case 3 where arguments[0] == "token" && arguments[1] == "--account":
                account = arguments[2]
            default:
                return nil
            }
            // What the argument parser would read differently (or refuse) is the main program's.
            if let account, account.isEmpty || account.hasPrefix("-") { return nil }
        }
    }

    /// The account's credentials when they can be used as they are.
    private static func usableAccount(_ name: String?, _ settings: EnvironmentSettings) -> OAuthCredentials? {
        // The settings the main program checks on this path, in its order; any it would refuse is its to report.
        guard accepts({ _ = try settings.storageMode() }),
              let directory = try? settings.credentialsDirectory(app: .sfauth),
              accepts({ _ = try settings.httpTimeout() }),
              let freshness = try? TokenFreshness(settings: settings),
              isTrusted(directory),
              let identifier = selectedIdentifier(name, in: directory),
              let credentials = account(identifier, in: directory),
              freshness.isUsable(credentials, at: Date()) else { return nil }
        return credentials
    }

    /// The account `name` selects, or the default account when no name is given.
    private static func selectedIdentifier(_ name: String?, in directory: String) -> String? {
        guard let name else { return defaultIdentifier(in: directory) }
        return identifier(selectedBy: name, in: directory)
    }

    /// The identifier the `default` file names.
    private static func defaultIdentifier(in directory: String) -> String? {
        SmallFile.read(directory + "/" + CredentialFile.defaultFile).flatMap(CredentialFile.defaultIdentifier(in:))
    }

    /// The one account `name` selects (`AccountNames`), else `nil`.
    private static func identifier(selectedBy name: String, in directory: String) -> String? {
        let accounts = SmallFile.names(in: directory + "/" + CredentialFile.accountsDirectory)
            .compactMap(CredentialFile.identifier(fromFileName:))
            .map { ($0, account($0, in: directory)) }
        let matches = AccountNames.identifiers(matching: name, in: accounts)
        return matches.count == 1 ? matches[0] : nil
    }

    /// The account's record, when its file can be read.
    private static func account(_ identifier: String, in directory: String) -> OAuthCredentials? {
        SmallFile.read(directory + "/" + CredentialFile.accountsDirectory + "/" + CredentialFile.fileName(for: identifier))
            .flatMap { try? CredentialFile.decode($0) }
    }

    /// Whether `check` passes. (Not `try?`, which would flatten an optional setting's `nil` into failure.)
    private static func accepts(_ check: () throws -> Void) -> Bool {
        do { try check() } catch { return false }
        return true
    }

    /// Whether the directory passes the store's trust rule (`DirectoryTrust`).
    private static func isTrusted(_ directory: String) -> Bool {
        var info = stat()
        guard lstat(directory, &info) == 0 else { return false }
        return DirectoryTrust.problem(mode: UInt32(info.st_mode), owner: UInt32(info.st_uid), user: UInt32(getuid())) == nil
    }
}

/// Reading the store's small files.
enum SmallFile {
    /// The names in a directory (none when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names = [String]()
        while let entry = readdir(stream) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        }
        return names
    }

    /// The file's bytes; `nil` when it cannot be read or is larger than the store ever reads (1 MiB).
    static func read(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > limit { return nil }
        }
    }
}
