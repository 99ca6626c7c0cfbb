/// How a confidential client proves itself at the token and revocation endpoints with its secret
/// (RFC 6749 §2.3.1; the names are RFC 7591's `token_endpoint_auth_method` values).
///
/// RFC 6749 has servers support HTTP Basic and allows the body only for clients that cannot use
/// Basic; most servers accept both, some only one (a client registered for `client_secret_basic` at
/// NanoIDP is refused with a secret in the body; GitHub documents the body). sfauth sends the body
/// first, as it always has, and on `invalid_client` tries HTTP Basic once, then remembers what the
/// server accepted with the account.
public enum ClientAuthentication: String, Sendable, Equatable, Codable {
    /// `client_id` and `client_secret` in the form body.
    case post = "client_secret_post"
    /// `Authorization: Basic` with the form-encoded id and secret; neither in the body.
    case basic = "client_secret_basic"
}
