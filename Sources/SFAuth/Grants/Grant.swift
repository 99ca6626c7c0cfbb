import SFAuthCore

/// A way to sign in without the browser redirect: for machines without a browser, service accounts
/// and CI. Passed to `OAuthCoordinator.authenticate(using:)`.
///
/// Its description names the grant and the user, never a password or key.
public struct Grant: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case deviceCode
        case clientCredentials
        case password(username: String, password: String)
        case jwtBearer(username: String, signer: JWTAssertionSigner, audience: String?)
        case refreshToken(String)
    }

    let kind: Kind

    /// The device authorization grant (RFC 8628): the person approves a code on any device with a
    /// browser. Needs the server's `deviceAuthorizationEndpoint`.
    public static let deviceCode = Grant(kind: .deviceCode)

    /// The client credentials grant (RFC 6749 §4.4): the client signs in as itself (a service
    /// account). Needs a confidential client (`ClientConfiguration.clientSecret`).
    public static let clientCredentials = Grant(kind: .clientCredentials)

    /// The resource owner password grant (RFC 6749 §4.3). RFC 9700 §2.4 forbids it for new
    /// deployments: the client sees the password and multi-factor sign-in cannot happen. Use it
    /// only where the server offers nothing else.
    public static func password(username: String, password: String) -> Grant {
        Grant(kind: .password(username: username, password: password))
    }

    /// The JWT bearer grant (RFC 7523): an assertion signed with the client's private key stands
    /// for `username`, with no person present (`sf org login jwt`).
    ///
    /// - Parameters:
    ///   - username: the user the assertion stands for (its `sub`).
    ///   - signer: holds the private key the assertion is signed with.
    ///   - audience: the assertion's `aud`. Default: for Salesforce `https://login.salesforce.com`
    ///     (`https://test.salesforce.com` for a sandbox), else the issuer, else the token endpoint.
    public static func jwtBearer(username: String, signer: JWTAssertionSigner, audience: String? = nil) -> Grant {
        Grant(kind: .jwtBearer(username: username, signer: signer, audience: audience))
    }

    /// A refresh token obtained elsewhere (an SFDX auth URL from a CI secret): one refresh grant
    /// (RFC 6749 §6) turns it into an account, which keeps the token unless the server rotates it.
    public static func refreshToken(_ token: String) -> Grant {
        Grant(kind: .refreshToken(token))
    }

    /// The auth type the delegate hears for this grant.
    public var authType: AuthType {
        switch kind {
        case .deviceCode: .deviceCode
        case .clientCredentials: .clientCredentials
        case .password: .password
        case .jwtBearer: .jwtBearer
        case .refreshToken: .refresh
        }
    }

    /// The grant and, where there is one, the username; no secrets.
    public var description: String {
        switch kind {
        case .password(let username, _), .jwtBearer(let username, _, _): "\(authType.rawValue) for \(username)"
        default: authType.rawValue
        }
    }

    /// The username the grant names, if any.
    var username: String? {
        switch kind {
        case .password(let username, _), .jwtBearer(let username, _, _): username
        default: nil
        }
    }
}
