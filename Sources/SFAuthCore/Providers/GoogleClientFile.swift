/// The client file the Google Cloud console downloads for an OAuth client (`client_secret_….json`):
/// `{"installed": {"client_id", "client_secret", "auth_uri", "token_uri", "redirect_uris", …}}` for a
/// Desktop app, `"web"` in place of `"installed"` for a Web application.
public struct GoogleClientFile: Sendable, Equatable {
    /// `client_id`.
    public var clientId: String
    /// `client_secret` — for a Desktop app, not confidential (Google, "OAuth 2.0 for iOS & Desktop Apps").
    public var clientSecret: String?
    /// `auth_uri`, when the file names it.
    public var authorizationEndpoint: String?
    /// `token_uri`, when the file names it.
    public var tokenEndpoint: String?

    /// Reads the file's contents.
    ///
    /// - Throws: `OAuthError.configuration` when it is not such a file, or is a Web application's:
    ///   those accept only the redirect URIs registered with them, not a loopback one on any port.
    public init(parsing bytes: [UInt8], path: String) throws(OAuthError) {
        guard let json = JSONValue.parse(bytes), case .object = json else {
            throw .configuration("\(path) is not a Google client file (JSON from the Google Cloud console's Credentials page)")
        }
        if json["web"] != nil, json["installed"] == nil {
            throw .configuration(
                "\(path) is a Web application client's file; sfauth signs in as a Desktop app: create an OAuth client ID of type \"Desktop app\" and download its JSON"
            )
        }
        guard let client = json["installed"], let clientId = client["client_id"]?.stringValue, !clientId.isEmpty else {
            throw .configuration(
                "\(path) has no installed.client_id: download the JSON of a \"Desktop app\" OAuth client from the Google Cloud console")
        }
        self.clientId = clientId
        clientSecret = client["client_secret"]?.stringValue
        authorizationEndpoint = client["auth_uri"]?.stringValue
        tokenEndpoint = client["token_uri"]?.stringValue
    }
}

extension OAuthServerError {
    /// What a refusal most likely means, when the provider's own words tell: Google's "Token has been
    /// expired or revoked." comes after 7 days to every refresh token of an app whose OAuth consent
    /// screen is in "Testing" status (developers.google.com, "Using OAuth 2.0", refresh token expiration).
    public var providerExplanation: String? {
        guard rejectsTheGrant, description == "Token has been expired or revoked." else { return nil }
        return "Google ends an app's refresh tokens after 7 days while its OAuth consent screen is in \"Testing\" status: "
            + "publish the app (Google Cloud console, OAuth consent screen) so that a sign-in lasts, or sign in again each week."
    }
}
