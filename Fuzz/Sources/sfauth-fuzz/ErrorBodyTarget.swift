import SFAuth

/// The answers whose errors sfauth reads: the revocation endpoint (`RevocationOutcome.interpret`),
/// the userinfo endpoint and Salesforce's identity URL (`UserIdentity.decode`, which also reads
/// `WWW-Authenticate` challenges), and the RFC 6749 §5.2 error of a refused token request.
///
/// Input: an HTTP response (`FuzzInput.response`), e.g. `400\ncontent-type: application/x-www-form-urlencoded\n\nerror=invalid_token`.
@Sendable func fuzzErrorBody(_ data: UnsafeRawBufferPointer) {
    let response = FuzzInput.response(data)
    do {
        switch try RevocationOutcome.interpret(response, endpoint: "https://login.salesforce.com/services/oauth2/revoke") {
        case .revoked: break
        case .alreadyInvalid(let error): _ = error?.summary
        }
    } catch {
        consume(error)
    }
    for flavor in [AuthorizationServer.Flavor.standard, .salesforce] {
        do {
            let identity = try UserIdentity.decode(response, flavor: flavor)
            for expected in [nil, "005xx000001Sv6e", "005XX000001SV6EAAG", identity.userId] {
                do { try identity.requireUser(expected, flavor: flavor) } catch { consume(error) }
            }
        } catch {
            consume(error)
        }
    }
    if !(200..<300).contains(response.status) {
        do { _ = try TokenResponse.decode(response, endpoint: "https://idp.example/token") } catch { consume(error) }
    }
}
