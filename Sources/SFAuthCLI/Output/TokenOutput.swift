import CredentialProtocols
import FoundationEssentials
import SFAuth

/// The formats `sfauth token` prints in.
package enum TokenOutput {
    /// The token alone.
    case bare
    /// A JSON object.
    case json
    /// `export NAME='value'` lines for `eval`.
    case shell
    /// `{"Authorization":"Bearer …"}`: the headers an MCP client's header-helper command prints.
    case headersJSON

    /// The text for `token`.
    package func render(_ token: IssuedToken) -> String {
        switch self {
        case .bare:
            return token.accessToken
        case .json:
            let fields = TokenJSON(
                access_token: token.accessToken, token_type: token.tokenType,
                expires_at: token.expiry.map(\.unixSeconds), expires: token.expiry.map(\.rfc3339),
                refresh_token_expires_at: token.refreshTokenExpiry?.date?.unixSeconds,
                refresh_token_expires: token.refreshTokenExpiry?.date?.rfc3339, instance_url: token.instanceURL, account: token.account,
                username: token.username)
            return JSONOutput.render(fields)
        case .headersJSON:
            return HeaderHelper.render(bearer: token.accessToken)
        case .shell:
            // Every variable is set or unset, so `eval` never leaves another account's value behind.
            return TokenVariables.values(for: token).map { name, value in
                value.map { "export \(name)=\(shellQuoted($0))" } ?? "unset \(name)"
            }.joined(separator: "\n")
        }
    }

    /// `'value'` for the shell; a value with characters that could drive a terminal is written as
    /// bash's `$'…'` with those characters escaped, so printing the lines is harmless and `eval`
    /// still sets the exact value.
    private func shellQuoted(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: TerminalText.needsEscape) || value.contains("\n") else {
            return "'" + value.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }
        var out = "$'"
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "'": out += "\\'"
            case _ where TerminalText.needsEscape(scalar) || scalar == "\n":
                let hex = String(scalar.value, radix: 16)
                out += scalar.value < 0x100 ? "\\x" + (hex.count == 1 ? "0" : "") + hex : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }
}

/// The JSON `sfauth token --json` prints; `expires_at` is seconds since the epoch, `expires` the
/// same time in RFC 3339 (both `null` for a token that never expires, or whose expiry is unknown);
/// `refresh_token_expires_at` and `refresh_token_expires` the same of the refresh token — when a
/// new sign-in will be needed — where its server said; `version` says which shape this is (1).
private struct TokenJSON: Encodable {
    var access_token: String
    var token_type: String
    var expires_at: Int64?
    var expires: String?
    var refresh_token_expires_at: Int64?
    var refresh_token_expires: String?
    var instance_url: String?
    var account: String?
    var username: String?

    func encode(to encoder: Encoder) throws {
        // Absent values are written as null, so scripts can rely on every key being there.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .version)
        try container.encode(access_token, forKey: .access_token)
        try container.encode(token_type, forKey: .token_type)
        try container.encode(expires_at, forKey: .expires_at)
        try container.encode(expires, forKey: .expires)
        try container.encode(refresh_token_expires_at, forKey: .refresh_token_expires_at)
        try container.encode(refresh_token_expires, forKey: .refresh_token_expires)
        try container.encode(instance_url, forKey: .instance_url)
        try container.encode(account, forKey: .account)
        try container.encode(username, forKey: .username)
    }

    private enum CodingKeys: String, CodingKey {
        case version, access_token, token_type, expires_at, expires, refresh_token_expires_at, refresh_token_expires, instance_url, account
        case username
    }
}
