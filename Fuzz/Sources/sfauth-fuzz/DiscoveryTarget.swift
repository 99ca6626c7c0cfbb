import SFAuth

/// A server's metadata (`DiscoveryDocument.decode`), checked against the issuer asked for and, to
/// get past that check, against the issuer it names itself; then the server it describes.
///
/// Input: an HTTP response (`FuzzInput.response`); a bare JSON document is a `200`.
@Sendable func fuzzDiscovery(_ data: UnsafeRawBufferPointer) {
    let response = FuzzInput.response(data)
    var issuers = ["https://idp.example"]
    if let named = JSONValue.parse(response.body)?["issuer"]?.stringValue { issuers.append(named) }
    for issuer in issuers {
        _ = DiscoveryDocument.locations(issuer: issuer)
        do {
            let document = try DiscoveryDocument.decode(response, issuer: issuer, location: issuer + "/.well-known/openid-configuration")
            let server = document.server
            do { try server.validate() } catch { consume(error) }
            _ = AccountIdentifier.make(server: server, userId: "u", clientId: "c")
        } catch {
            consume(error)
        }
    }
}
