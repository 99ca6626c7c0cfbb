#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import SFAuthModel

/// `sfauth token` with a usable stored token, answered without the main program.
enum CachedToken {
    /// Prints the token for `sfauth token` and returns 0 when that is the whole answer: the command
    /// is exactly `token`, and `SFAUTH_ACCESS_TOKEN` is set, or the default account's stored token is
    /// usable. `nil` in every other case — other arguments, a setting the main program would
    /// refuse, a directory it would not trust, a file it could not read, a token to refresh — so that
    /// the main program answers, exactly as it would have without this shortcut.
    static func answer(arguments: [String]) -> Int32? {
        guard arguments == ["token"] else { return nil }
        let settings = EnvironmentSettings(prefix: "SFAUTH", environment: ProcessInfo.processInfo.environment)
        if let supplied = settings.suppliedToken {
            print(supplied.accessToken)
            return 0
        }
        guard let credentials = usableDefaultAccount(settings) else { return nil }
        print(credentials.accessToken)
        return 0
    }

    /// The default account's credentials when they can be used as they are.
    private static func usableDefaultAccount(_ settings: EnvironmentSettings) -> OAuthCredentials? {
        // The settings the main program checks on this path, in its order; any it would refuse is its to report.
        guard accepts({ _ = try settings.storageMode() }),
              let directory = try? settings.credentialsDirectory(app: .sfauth),
              accepts({ _ = try settings.httpTimeout() }),
              let freshness = try? TokenFreshness(settings: settings),
              isTrusted(directory),
              let defaultFile = SmallFile.read(directory + "/" + CredentialFile.defaultFile),
              let identifier = CredentialFile.defaultIdentifier(in: defaultFile),
              let accountFile = SmallFile.read(directory + "/" + CredentialFile.accountsDirectory + "/"
                                               + CredentialFile.fileName(for: identifier)),
              let credentials = try? CredentialFile.decode(accountFile),
              freshness.isUsable(credentials, at: Date()) else { return nil }
        return credentials
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
