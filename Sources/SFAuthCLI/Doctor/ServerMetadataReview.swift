import SFAuth

/// `sfauth doctor --issuer URL` / `--preset NAME`: the verdicts on a server's published metadata
/// (OpenID Connect Discovery 1.0 §3, RFC 8414 §2), each line saying what it means for a sign-in
/// with sfauth. Pure: the metadata is read here from the raw answer, as values, and judged by the
/// rules `DiscoveryDocument.decode` signs in by.
package enum ServerMetadataReview {
    /// The lines for `server`, in the order they are printed.
    package static func checks(_ server: DoctorFacts.Server) -> [DoctorCheck] {
        switch server {
        case .unresolved(let message):
            return [DoctorCheck("config", .problem, "\(message) (sfauth login would stop there too)")]
        case .builtIn(let preset, let endpoint):
            let what = preset.map { "preset \($0)" } ?? "this server"
            return [
                DoctorCheck(
                    "metadata", .note,
                    "\(what): sfauth signs in with built-in endpoints (\(endpoint)) and reads no server metadata, so there is none to check")
            ]
        case .metadata(let issuer, let overrides, let answer):
            return checks(issuer: issuer, overrides: overrides, answer: answer)
        }
    }

    /// The lines for the metadata of `issuer`, as its locations answered.
    package static func checks(issuer: String, overrides: EndpointOverrides = EndpointOverrides(), answer: DoctorFacts.MetadataAnswer)
        -> [DoctorCheck]
    {
        let location: String
        let response: HTTPResponse
        switch answer {
        case .unreachable(let url, let reason):
            return [
                DoctorCheck(
                    "metadata", .problem,
                    "could not reach \(url): \(reason); check the issuer URL, the network and any proxy (a sign-in would fail the same way)")
            ]
        case .notFound(let locations):
            return [
                DoctorCheck(
                    "metadata", .problem,
                    "no metadata at \(locations.joined(separator: " nor ")) (HTTP 404): check the issuer URL; it is the server's issuer, as its tokens name it, not its login page"
                )
            ]
        case .response(let url, let answered):
            (location, response) = (url, answered)
        }
        guard response.status == 200 else {
            let failing = response.status >= 500 ? "; the server is failing, try again later" : ""
            return [
                DoctorCheck("metadata", .problem, "\(location) answered HTTP \(response.status) instead of metadata: check the issuer URL\(failing)")
            ]
        }
        guard let json = JSONValue.parse(response.body), case .object = json else {
            return [
                DoctorCheck(
                    "metadata", .problem,
                    "\(location) answered with \(describe(response)) instead of JSON metadata: check the issuer URL (a login page or a proxy may be answering)"
                )
            ]
        }
        guard let advertised = json["issuer"]?.stringValue else {
            return [DoctorCheck("metadata", .problem, "the metadata at \(location) names no issuer: sfauth refuses it; check the issuer URL")]
        }
        var checks = [issuerCheck(asked: issuer, advertised: advertised, location: location)]
        checks += transport(issuer) + endpoints(json)
        checks += [
            pkce(json), revocation(json, overrides), issuerParameter(json), refresh(json), device(json, overrides),
        ]
        return checks
    }

    // MARK: - Findings

    private static func issuerCheck(asked: String, advertised: String, location: String) -> DoctorCheck {
        if advertised == asked { return DoctorCheck("issuer", .ok, "the metadata at \(location) names \(asked), as asked") }
        if advertised.contains(tenantPlaceholder) && matches(template: advertised, asked) {
            return DoctorCheck(
                "issuer", .note,
                "the metadata names the issuer template \(advertised) (Microsoft Entra's /common and /organizations): each ID token's iss is checked against it with that token's tid"
            )
        }
        return DoctorCheck(
            "issuer", .problem,
            "the metadata at \(location) is for the issuer \(advertised), not \(asked): sfauth refuses it; use exactly \(advertised) if you trust it")
    }

    /// Plain http: the configuration already refuses it for any host but this machine's; said here
    /// too so that the review holds on its own.
    private static func transport(_ issuer: String) -> [DoctorCheck] {
        guard let parts = EndpointURL.parts(of: issuer), parts.scheme == "http" else { return [] }
        guard EndpointURL.isLoopback(host: parts.host) else {
            return [DoctorCheck("http", .problem, "\(issuer) uses plain http: sfauth refuses it (https only, except to this machine); use https")]
        }
        return [DoctorCheck("http", .note, "\(issuer) uses plain http to this machine: fine for a test server, never for a real one")]
    }

    /// The endpoints a sign-in reads: the two it needs must be there, and every one must be secure.
    private static func endpoints(_ json: JSONValue) -> [DoctorCheck] {
        let missing = ["authorization_endpoint", "token_endpoint"].filter { json[$0]?.stringValue == nil }
        if !missing.isEmpty {
            return [DoctorCheck("endpoint", .problem, "the metadata has no \(missing.joined(separator: " nor ")): sfauth cannot sign in there")]
        }
        let names = [
            "authorization_endpoint", "token_endpoint", "revocation_endpoint", "userinfo_endpoint", "jwks_uri", "device_authorization_endpoint",
        ]
        for name in names {
            guard let url = json[name]?.stringValue else { continue }
            do throws(OAuthError) {
                try EndpointURL.requireSecure(url, name: name)
            } catch {
                guard case .configuration(let problem) = error else { continue }
                return [DoctorCheck("endpoint", .problem, "\(problem.text): sfauth refuses the metadata")]
            }
        }
        return []
    }

    private static func pkce(_ json: JSONValue) -> DoctorCheck {
        guard case .array(let values)? = json["code_challenge_methods_supported"] else {
            return DoctorCheck(
                "pkce", .note,
                "no code_challenge_methods_supported: sfauth sends PKCE S256 anyway; the server does not say whether it checks it")
        }
        let methods = values.compactMap(\.stringValue)
        let listed = methods.isEmpty ? "no method" : methods.joined(separator: ", ")
        guard methods.contains("S256") else {
            return DoctorCheck(
                "pkce", .problem,
                "code_challenge_methods_supported lists \(listed), not S256: sfauth refuses servers that list PKCE methods without S256")
        }
        return DoctorCheck("pkce", .ok, "PKCE S256 is supported (code_challenge_methods_supported: \(listed))")
    }

    private static func revocation(_ json: JSONValue, _ overrides: EndpointOverrides) -> DoctorCheck {
        if let configured = overrides.revocationEndpoint {
            return DoctorCheck("revoke", .ok, "sfauth logout revokes the tokens at \(configured) (revoke_url, configured)")
        }
        guard let endpoint = json["revocation_endpoint"]?.stringValue else {
            return DoctorCheck(
                "revoke", .note,
                "no revocation_endpoint: sfauth logout can only forget the tokens on this machine; they stay valid at the server until they expire")
        }
        return DoctorCheck("revoke", .ok, "sfauth logout revokes the tokens at \(endpoint)")
    }

    private static func issuerParameter(_ json: JSONValue) -> DoctorCheck {
        guard json["authorization_response_iss_parameter_supported"] == .bool(true) else {
            return DoctorCheck(
                "iss", .note,
                "no authorization_response_iss_parameter_supported (RFC 9207): the defence against mix-ups rests on sfauth's state per sign-in and redirect per server; fine"
            )
        }
        return DoctorCheck("iss", .ok, "the server names itself in its redirects (RFC 9207 iss): sfauth checks it, against mix-ups")
    }

    private static func refresh(_ json: JSONValue) -> DoctorCheck {
        guard case .array(let values)? = json["scopes_supported"] else {
            return DoctorCheck(
                "refresh", .note,
                "no scopes_supported: nothing says whether offline_access gives a refresh token; ask for the scopes the server documents (--scope)")
        }
        guard values.contains(.string("offline_access")) else {
            return DoctorCheck(
                "refresh", .note,
                "scopes_supported lacks offline_access: a refresh token comes another way (a provider parameter) or not at all; without one, sfauth signs in again when the access token expires"
            )
        }
        return DoctorCheck("refresh", .ok, "scopes_supported lists offline_access: a sign-in can ask for a refresh token with it")
    }

    private static func device(_ json: JSONValue, _ overrides: EndpointOverrides) -> DoctorCheck {
        if let configured = overrides.deviceAuthorizationEndpoint {
            return DoctorCheck("device", .ok, "sfauth login --device signs in through \(configured) (device_authorization_url, configured)")
        }
        guard let endpoint = json["device_authorization_endpoint"]?.stringValue else {
            return DoctorCheck("device", .note, "no device_authorization_endpoint: sfauth login --device is unavailable")
        }
        return DoctorCheck("device", .ok, "sfauth login --device signs in through \(endpoint)")
    }

    // MARK: - Helpers

    /// Microsoft Entra's placeholder for the tenant in a multi-tenant issuer.
    private static let tenantPlaceholder = "{tenantid}"

    /// Whether `issuer` is `template` with a tenant in place of each placeholder path segment: a
    /// template for another server is a mismatch like any other.
    private static func matches(template: String, _ issuer: String) -> Bool {
        let expected = template.split(separator: "/", omittingEmptySubsequences: false)
        let actual = issuer.split(separator: "/", omittingEmptySubsequences: false)
        return expected.count == actual.count
            && zip(expected, actual).allSatisfy { $0 == $1 || ($0 == tenantPlaceholder && !$1.isEmpty) }
    }

    /// A short description of a body, never its content: "an empty body", "an HTML page",
    /// "a body of 120 bytes (text/plain)".
    private static func describe(_ response: HTTPResponse) -> String {
        if response.body.isEmpty { return "an empty body" }
        if response.mediaType == "text/html" || response.bodyText.lowercased().contains("<html") { return "an HTML page" }
        return "a body of \(response.body.count) bytes (\(response.mediaType ?? "no type"))"
    }
}
