import CSecret
import Glibc
import SFAuthCore

/// One call into the CSecret shim with a store's options, turned into a `SecretServiceFailure`
/// when it does not succeed.
struct SecretServiceCall {
    let schema: String
    let libraryNames: [String]
    let milliseconds: Int32

    init(store: SecretServiceStore) {
        schema = store.schema
        libraryNames = store.libraryNames
        milliseconds = Self.milliseconds(store.timeout)
    }

    /// Runs `body` with the shim's options, the timeout in milliseconds and a result to fill.
    func run(
        _ body: (UnsafePointer<sfsecret_options>, Int32, UnsafeMutablePointer<sfsecret_result>) -> Int32
    ) throws(OAuthError) {
        if let failure = outcome(body) { throw failure.error }
    }

    /// Like `run`, but hands back the failure (problem and remedy apart) instead of throwing.
    func outcome(
        _ body: (UnsafePointer<sfsecret_options>, Int32, UnsafeMutablePointer<sfsecret_result>) -> Int32
    ) -> SecretServiceFailure? {
        let owned: [UnsafeMutablePointer<CChar>?] = libraryNames.map { strdup($0) }
        defer { owned.forEach { free($0) } }
        let names: [UnsafePointer<CChar>?] = owned.map { $0.map { UnsafePointer($0) } } + [nil]
        var result = sfsecret_result()
        let status = schema.withCString { schemaName in
            names.withUnsafeBufferPointer { nameList in
                var options = sfsecret_options(library_names: nameList.baseAddress, schema_name: schemaName)
                return body(&options, milliseconds, &result)
            }
        }
        guard status != Int32(SFSECRET_OK.rawValue) else { return nil }
        let detail = withUnsafeBytes(of: &result.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return SecretServiceFailure(status: status, detail: detail, timeoutMilliseconds: milliseconds)
    }

    /// `duration` in whole milliseconds, at least 1 and at most `Int32.max`.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds.multipliedReportingOverflow(by: 1000)
        guard !total.overflow else { return seconds < 0 ? 1 : Int32.max }
        let milliseconds = total.partialValue + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(1, milliseconds))
    }
}

/// Why a keyring call failed: what is wrong (`problem`) and what to do (`remedy`).
struct SecretServiceFailure: Error, Sendable {
    /// The shim's `sfsecret_status`.
    let status: Int32
    /// What is wrong, without advice (used by `probe` as the reason).
    let problem: String
    /// What to do about it; may be empty.
    let remedy: String

    init(status: Int32, detail: String, timeoutMilliseconds: Int32) {
        self.status = status
        let detailSuffix = detail.isEmpty ? "" : " (\(detail))"
        switch UInt32(bitPattern: status) {
        case SFSECRET_NO_LIBRARY.rawValue:
            problem = "libsecret is not installed\(detailSuffix)"
            remedy = "install libsecret-1-0"
        case SFSECRET_NO_BUS.rawValue:
            problem = "no D-Bus session bus to reach the Secret Service keyring\(detailSuffix)"
            remedy = "run in a desktop session (or set DBUS_SESSION_BUS_ADDRESS)"
        case SFSECRET_NO_SERVICE.rawValue:
            problem = "no Secret Service daemon is running on the D-Bus session bus\(detailSuffix)"
            remedy = "start one (gnome-keyring, KWallet, KeePassXC with Secret Service integration)"
        case SFSECRET_NO_COLLECTION.rawValue:
            problem = "the Secret Service keyring has no default collection"
            remedy = "create one (e.g. log in to the desktop once, or with Seahorse)"
        case SFSECRET_LOCKED.rawValue:
            problem = "the keyring is locked"
            remedy = "unlock it (e.g. log in to the desktop)"
        case SFSECRET_TIMED_OUT.rawValue:
            problem = "the keyring did not answer within \(Self.seconds(timeoutMilliseconds))"
            remedy = "its daemon may be hung: try again, or restart it"
        case SFSECRET_INVALID.rawValue:
            problem = "invalid keyring request\(detailSuffix)"
            remedy = ""
        default:
            problem = "the Secret Service keyring failed\(detail.isEmpty ? "" : ": \(detail)")"
            remedy = "try again,"
        }
    }

    /// The error a `SecretStore` throws: one line, problem then remedy.
    var error: OAuthError {
        .storage(Problem(remedy.isEmpty ? problem : "\(problem); \(remedy)"))
    }

    /// "3 s", "0.5 s", "250 ms".
    static func seconds(_ milliseconds: Int32) -> String {
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
        if milliseconds % 100 == 0 { return "\(milliseconds / 1000).\(milliseconds % 1000 / 100) s" }
        return "\(milliseconds) ms"
    }
}
