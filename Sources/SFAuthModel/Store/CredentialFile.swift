import FoundationEssentials

/// The credentials directory's file format — the one definition of it, shared by the store that
/// writes it and by sfauth's fast front end, which reads it without the rest of SFAuth.
///
/// Layout of the directory (0700):
/// - `accounts/<percent-encoded identifier>.json` — one account's `OAuthCredentials` as JSON
///   (dates as Unix seconds), 0600;
/// - `default` — the default account's identifier on its first line;
/// - `names/` — the name index: which accounts each alias, username and email selects (its format
///   and rules are `SFAuthStore.NameIndex`'s);
/// - `.lock` — held with `flock` by every writer; readers need no lock because writes are atomic;
/// - `locks/<percent-encoded identifier>.lock` — held while that account's tokens are refreshed;
/// - `reminders/<percent-encoded identifier>` — empty; its time is when `sfauth token` last said
///   that the account's refresh token expires soon (`SignInReminder`).
public enum CredentialFile {
    /// The subdirectory with one file per account.
    public static let accountsDirectory = "accounts"
    /// The file naming the default account.
    public static let defaultFile = "default"

    /// The name of an account's file in `accountsDirectory`.
    public static func fileName(for identifier: String) -> String {
        FormURLEncoding.encode(identifier) + ".json"
    }

    /// The identifier an account file's name stands for; `nil` for names that are not account files.
    public static func identifier(fromFileName name: String) -> String? {
        guard !name.hasPrefix("."), name.hasSuffix(".json") else { return nil }
        return FormURLEncoding.decode(name.dropLast(5))
    }

    /// The bytes of an account's file: pretty-printed JSON with sorted keys and a final newline.
    public static func encode(_ credentials: OAuthCredentials) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        // Encoding a value made of strings, finite numbers and dates cannot fail.
        return Array(try! encoder.encode(credentials)) + [UInt8(ascii: "\n")]
    }

    /// Why an account file could not be read as credentials.
    public struct Unreadable: Error, Sendable, Equatable {
        /// In a few words: `missing 'accessToken'`, `wrong type at 'server.issuer'`,
        /// `unknown value at 'server.flavor'`, `not JSON`.
        public let reason: String
    }

    /// The credentials in an account file's bytes (read by hand: `CredentialFile+Reading.swift`).
    public static func decode(_ bytes: [UInt8]) throws(Unreadable) -> OAuthCredentials {
        var credentials = try read(bytes)
        // Records written before the place was recorded for file accounts: a refresh token in
        // the file is placed there.
        if credentials.refreshToken != nil && credentials.refreshTokenInSecretStore == nil {
            credentials.refreshTokenInSecretStore = false
        }
        guard isTokenText(credentials.accessToken) else { throw Unreadable(reason: "its access token holds characters no token may hold") }
        guard credentials.refreshToken.map(isTokenText) != false else {
            throw Unreadable(reason: "its refresh token holds characters no token may hold")
        }
        return credentials
    }

    /// Whether `text` is made of the characters RFC 6749 allows in tokens: printable ASCII
    /// (`%x20-7E`; Appendix A.12, A.17) — what the token response parser accepts. A record edited
    /// or damaged outside sfauth must not hand a terminal escape to whoever prints its token.
    public static func isTokenText(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// The default account's identifier in the `default` file's bytes; `nil` when it names none.
    public static func defaultIdentifier(in bytes: [UInt8]) -> String? {
        let identifier = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        return identifier?.isEmpty == false ? identifier : nil
    }

    /// The bytes of a `default` file naming `identifier`.
    public static func defaultFileContents(naming identifier: String) -> [UInt8] {
        Array((identifier + "\n").utf8)
    }
}
