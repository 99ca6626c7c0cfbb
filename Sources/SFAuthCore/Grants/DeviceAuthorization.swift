/// A device authorization response (RFC 8628 §3.2): the codes and where the user approves them.
public struct DeviceAuthorization: Sendable, Equatable {
    /// `device_code`: what the client polls the token endpoint with. Secret; never shown.
    public var deviceCode: String
    /// `user_code`: what the person types at the verification page.
    public var userCode: String
    /// `verification_uri`: the page where the person enters the user code.
    public var verificationURI: String
    /// `verification_uri_complete`: the same page with the user code filled in, when the server sends it.
    public var verificationURIComplete: String?
    /// `expires_in`: seconds until the codes expire.
    public var expiresIn: Int
    /// `interval`: the minimum seconds between polls. Default when absent: 5 (§3.2).
    public var interval: Int

    /// The user code as it may be shown on a terminal (control and bidi characters escaped).
    public var displayUserCode: String { TerminalText.escaped(userCode) }

    /// The longest `expires_in` believed: one day (longer values are clamped).
    package static let maximumLifetime = 86_400
    /// The longest `interval` believed: five minutes (longer values are clamped).
    package static let maximumInterval = 300

    /// Creates a device authorization from its fields.
    public init(
        deviceCode: String, userCode: String, verificationURI: String, verificationURIComplete: String? = nil,
        expiresIn: Int, interval: Int = 5
    ) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    /// The device authorization request (RFC 8628 §3.1): the client id and the scopes, as a form POST.
    package static func request(endpoint: String, client: ClientConfiguration) -> HTTPRequest {
        TokenRequest.post(to: endpoint, client: client, parameters: client.scopeParameter)
    }

    /// Reads the device authorization endpoint's answer: the codes, an RFC 6749 §5.2 error
    /// (§3.2: "the same as the token endpoint's"), or something unusable.
    ///
    /// Google's older `verification_url` is accepted for `verification_uri`. The verification
    /// pages must be https (or http on this machine): a person types a code there.
    package static func decode(_ response: HTTPResponse, endpoint: String) throws(OAuthError) -> DeviceAuthorization {
        let json = JSONValue.parse(response.body)
        guard (200..<300).contains(response.status) else {
            if let error = TokenResponse.serverError(in: response, json: json) { throw .tokenRequestRejected(error) }
            throw .invalidServerResponse("the device authorization endpoint \(endpoint) answered HTTP \(response.status)")
        }
        guard let json, case .object = json else {
            throw .invalidServerResponse("the device authorization endpoint \(endpoint) did not answer with a JSON object")
        }
        guard let deviceCode = json["device_code"]?.stringValue, !deviceCode.isEmpty,
            let userCode = json["user_code"]?.stringValue, !userCode.isEmpty,
            let verificationURI = (json["verification_uri"] ?? json["verification_url"])?.stringValue
        else {
            throw .invalidServerResponse("the device authorization response of \(endpoint) lacks device_code, user_code or verification_uri")
        }
        try EndpointURL.requireSecure(verificationURI, name: "verification_uri")
        let complete = json["verification_uri_complete"]?.stringValue
        if let complete { try EndpointURL.requireSecure(complete, name: "verification_uri_complete") }
        guard let expiresIn = json["expires_in"]?.numberValue, expiresIn >= 1 else {
            throw .invalidServerResponse("the device authorization response of \(endpoint) has no expires_in of at least one second")
        }
        // Range-checked where they enter: a code valid for days, or a poll every few hours, is not
        // what any person waits for; clamping keeps every later computation in range.
        let interval = json["interval"]?.numberValue.map { Int(min(max($0, 1), Double(maximumInterval))) } ?? 5
        return DeviceAuthorization(
            deviceCode: deviceCode, userCode: userCode, verificationURI: verificationURI,
            verificationURIComplete: complete, expiresIn: Int(min(expiresIn, Double(maximumLifetime))),
            interval: interval)
    }
}
