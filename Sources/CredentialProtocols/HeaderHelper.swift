/// What an MCP client's header-helper command prints (Claude Code's `headersHelper`, and clients
/// like it): a JSON object of HTTP headers to send, here `{"Authorization":"Bearer …"}` — the
/// scheme of RFC 6750 §2.1 whatever case the server wrote its `token_type` in. One line, written by
/// hand as `ExecCredential.render` is, so the front end and the main program print the same bytes.
package enum HeaderHelper {
    /// `{"Authorization":"Bearer <token>"}`, the token escaped as a JSON string.
    package static func render(bearer token: String) -> String {
        #"{"Authorization":"# + ExecCredential.jsonString("Bearer " + token) + "}"
    }
}
