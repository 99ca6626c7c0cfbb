import SFAuth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The formats `sfauth token` prints in.
enum TokenOutput {
    /// The token alone.
    case bare
    /// A JSON object.
    case json
    /// `export NAME='value'` lines for `eval`.
    case shell

    /// The text for stored credentials.
    func render(_ credentials: OAuthCredentials, expiry: Date) -> String {
        render(accessToken: credentials.accessToken, instanceURL: credentials.instanceURL, tokenType: credentials.tokenType,
               expiresAt: expiry, account: credentials.identifier, username: credentials.username)
    }

    /// The text for a token with whatever is known about it.
    func render(accessToken: String, instanceURL: String?, tokenType: String = "Bearer", expiresAt: Date? = nil,
                account: String? = nil, username: String? = nil) -> String {
        switch self {
        case .bare:
            return accessToken
        case .json:
            let fields = TokenJSON(access_token: accessToken, token_type: tokenType,
                                   expires_at: expiresAt.map { Int64($0.timeIntervalSince1970) },
                                   instance_url: instanceURL, account: account, username: username)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return String(decoding: (try? encoder.encode(fields)) ?? Data("{}".utf8), as: UTF8.self)
        case .shell:
            var lines = ["export SF_ACCESS_TOKEN=\(shellQuoted(accessToken))"]
            if let instanceURL { lines.append("export SF_INSTANCE_URL=\(shellQuoted(instanceURL))") }
            if let username { lines.append("export SF_USERNAME=\(shellQuoted(username))") }
            return lines.joined(separator: "\n")
        }
    }

    private func shellQuoted(_ value: String) -> String {
        "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// The JSON `sfauth token --json` prints; `expires_at` is seconds since the epoch.
private struct TokenJSON: Encodable {
    var access_token: String
    var token_type: String
    var expires_at: Int64?
    var instance_url: String?
    var account: String?
    var username: String?

    func encode(to encoder: Encoder) throws {
        // Absent values are written as null, so scripts can rely on every key being there.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(access_token, forKey: .access_token)
        try container.encode(token_type, forKey: .token_type)
        try container.encode(expires_at, forKey: .expires_at)
        try container.encode(instance_url, forKey: .instance_url)
        try container.encode(account, forKey: .account)
        try container.encode(username, forKey: .username)
    }

    private enum CodingKeys: String, CodingKey { case access_token, token_type, expires_at, instance_url, account, username }
}
