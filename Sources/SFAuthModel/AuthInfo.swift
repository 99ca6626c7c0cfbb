/// How an authentication is being performed; passed to every delegate callback (after
/// `SFOAuthInfo` in Salesforce's Mobile SDK).
public struct AuthInfo: Sendable, Equatable {
    /// The way credentials are being obtained.
    public var authType: AuthType

    /// Creates an auth info.
    public init(authType: AuthType) {
        self.authType = authType
    }
}

/// The way credentials are being obtained.
public enum AuthType: String, Sendable, Equatable, Codable {
    /// The authorization code flow through the user's browser (RFC 6749 §4.1, RFC 8252).
    case browser
    /// A refresh token grant (RFC 6749 §6).
    case refresh
    /// The device authorization grant (RFC 8628): the user approves a code on another device.
    case deviceCode = "device_code"
    /// The client credentials grant (RFC 6749 §4.4), for service accounts.
    case clientCredentials = "client_credentials"
    /// The resource owner password grant (RFC 6749 §4.3); discouraged by RFC 9700.
    case password
    /// A JWT bearer assertion signed with the client's private key (RFC 7523 §2.1).
    case jwtBearer = "jwt_bearer"
}
