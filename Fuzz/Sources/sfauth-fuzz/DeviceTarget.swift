import SFAuth

/// The device authorization grant (RFC 8628): the device authorization response
/// (`DeviceAuthorization.decode`), then poll responses through `DevicePolling.next(after:endpoint:)`.
///
/// Input: sections separated by a line `---`, each an HTTP response (`FuzzInput.response`): the
/// first answers the device authorization request, the others are polls. When the first is refused,
/// the polls run against a typical authorization (Salesforce's shape).
@Sendable func fuzzDevice(_ data: UnsafeRawBufferPointer) {
    let sections = FuzzInput.sections(data, limit: 8)
    let endpoint = "https://login.salesforce.com/services/oauth2/token"
    var authorization = DeviceAuthorization(
        deviceCode: "M2Y0ZTEy", userCode: "ABCD-EFGH",
        verificationURI: "https://login.salesforce.com/setup/connect", expiresIn: 600, interval: 5)
    let first = FuzzInput.response(sections[0])
    do throws(OAuthError) {
        authorization = try DeviceAuthorization.decode(first, endpoint: endpoint)
        _ = authorization.displayUserCode
    } catch {
        consume(error)
    }
    _ = DeviceAuthorization.request(endpoint: endpoint, client: ClientConfiguration(clientId: "PlatformCLI"))
    var polling = DevicePolling(authorization)
    for section in sections.dropFirst() {
        _ = polling.tokenRequest(tokenEndpoint: endpoint, client: ClientConfiguration(clientId: "PlatformCLI"))
        do {
            switch try polling.next(after: FuzzInput.response(section), endpoint: endpoint) {
            case .granted(let tokens): _ = tokens.accessToken
            case .wait(let seconds): precondition(seconds >= 0, "DevicePolling: a negative wait of \(seconds) s")
            }
        } catch {
            consume(error)
        }
    }
}
