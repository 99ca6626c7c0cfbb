import FoundationEssentials

/// Reading an account record by hand, member by member — the inverse of `CredentialFile.encode`
/// (the synthesized `Codable` coding of `OAuthCredentials`, dates as Unix seconds), without
/// `JSONDecoder`: both programs read a record on every `sfauth token`, and `sfauth accounts` reads
/// them all (see `JSONParser` for what `Codable` costs at start).
///
/// The rules are the synthesized decoder's: unknown members are ignored; an optional member may be
/// absent or `null`; a required one that is absent is "missing 'name'"; a member of the wrong type,
/// or a `null` where a value is required, is "wrong type at 'path'"; an enumeration's unknown value
/// is "unknown value at 'path'". `CredentialFileTests` checks the two decoders agree.
extension CredentialFile {
    static func read(_ bytes: [UInt8]) throws(Unreadable) -> OAuthCredentials {
        guard let document = JSONParser.parse(bytes) else { throw Unreadable(reason: "not JSON") }
        let record = try RecordObject(document, path: "")
        var credentials = OAuthCredentials(
            identifier: try record.string("identifier"),
            server: try readServer(try record.object("server")),
            clientId: try record.string("clientId"),
            redirectURI: try record.string("redirectURI"),
            accessToken: try record.string("accessToken"),
            tokenType: try record.string("tokenType"),
            issuedAt: try record.date("issuedAt")
        )
        credentials.scopes = try record.strings("scopes")
        credentials.refreshToken = try record.optionalString("refreshToken")
        credentials.refreshTokenExpiresAt = try record.optionalDate("refreshTokenExpiresAt")
        credentials.refreshTokenLifetime = try record.optionalNumber("refreshTokenLifetime")
        credentials.expiresAt = try record.optionalDate("expiresAt")
        credentials.idToken = try record.optionalString("idToken")
        credentials.instanceURL = try record.optionalString("instanceURL")
        credentials.identityURL = try record.optionalString("identityURL")
        credentials.userId = try record.optionalString("userId")
        credentials.organizationId = try record.optionalString("organizationId")
        credentials.username = try record.optionalString("username")
        credentials.displayName = try record.optionalString("displayName")
        credentials.email = try record.optionalString("email")
        credentials.alias = try record.optionalString("alias")
        credentials.status = try record.optionalEnumeration("status", AccountStatus.self)
        credentials.refreshTokenInSecretStore = try record.optionalBool("refreshTokenInSecretStore")
        credentials.jwtBearerRenewal = try record.optionalObject("jwtBearerRenewal").map(readJWTBearerRenewal)
        credentials.obtainedBy = try record.optionalEnumeration("obtainedBy", AuthType.self)
        credentials.authorizationResponseIssuer = try record.optionalString("authorizationResponseIssuer")
        credentials.clientSecretBinding = try record.optionalObject("clientSecretBinding").map { object throws(Unreadable) in
            ClientSecretBinding(salt: try object.string("salt"), digest: try object.string("digest"))
        }
        credentials.clientSecret = try record.optionalString("clientSecret")
        credentials.clientAuthentication = try record.optionalEnumeration("clientAuthentication", ClientAuthentication.self)
        credentials.resource = try record.optionalString("resource")
        credentials.recipe = try record.optionalObject("recipe").map(readRecipe)
        credentials.targetedTokens = try record.optionalArray("targetedTokens").map { elements throws(Unreadable) in
            var tokens: [TargetedToken] = []
            for (index, element) in elements.enumerated() {
                tokens.append(try readTargetedToken(try RecordObject(element, path: record.path(of: "targetedTokens") + ".\(index)")))
            }
            return tokens
        }
        return credentials
    }

    private static func readServer(_ object: RecordObject) throws(Unreadable) -> AuthorizationServer {
        var server = AuthorizationServer(
            authorizationEndpoint: try object.string("authorizationEndpoint"),
            tokenEndpoint: try object.string("tokenEndpoint"),
            revocationEndpoint: try object.optionalString("revocationEndpoint"),
            userinfoEndpoint: try object.optionalString("userinfoEndpoint"),
            issuer: try object.optionalString("issuer"),
            jwksURI: try object.optionalString("jwksURI"),
            deviceAuthorizationEndpoint: try object.optionalString("deviceAuthorizationEndpoint"),
            flavor: try object.enumeration("flavor", AuthorizationServer.Flavor.self)
        )
        server.issuerInAuthorizationResponse = try object.optionalBool("issuerInAuthorizationResponse")
        return server
    }

    private static func readTargetedToken(_ object: RecordObject) throws(Unreadable) -> TargetedToken {
        let stored = try object.object("target")
        var target = TokenTarget()  // member by member, as the synthesized decoder reads it
        target.scopes = try stored.optionalStrings("scopes")
        target.audience = try stored.optionalString("audience")
        target.resource = try stored.optionalString("resource")
        return TargetedToken(
            target: target,
            accessToken: try object.string("accessToken"), tokenType: try object.string("tokenType"),
            issuedAt: try object.date("issuedAt"), expiresAt: try object.optionalDate("expiresAt"),
            scopes: try object.optionalStrings("scopes"), obtainedBy: try object.enumeration("obtainedBy", TargetRoute.self))
    }

    private static func readJWTBearerRenewal(_ object: RecordObject) throws(Unreadable) -> JWTBearerRenewal {
        JWTBearerRenewal(
            keyFile: try object.string("keyFile"), keyID: try object.optionalString("keyID"),
            subject: try object.string("subject"), audience: try object.string("audience"))
    }

    private static func readRecipe(_ object: RecordObject) throws(Unreadable) -> SignInRecipe {
        var parameters: [SignInRecipe.Parameter] = []
        for (index, element) in try object.array("parameters").enumerated() {
            let parameter = try RecordObject(element, path: object.path(of: "parameters") + ".\(index)")
            parameters.append(SignInRecipe.Parameter(name: try parameter.string("name"), value: try parameter.string("value")))
        }
        return SignInRecipe(
            grant: try object.enumeration("grant", AuthType.self), scopes: try object.strings("scopes"),
            callbackHost: try object.string("callbackHost"), callbackPort: try object.port("callbackPort"),
            callbackPath: try object.string("callbackPath"), parameters: parameters,
            username: try object.optionalString("username"))
    }
}

/// One JSON object of a record, with its place in the record for the reasons it gives.
private struct RecordObject {
    let members: [String: JSONValue]
    /// `""` for the record itself, else the dotted path of this object (`server`, `recipe.parameters.0`).
    let prefix: String

    init(_ value: JSONValue, path: String) throws(CredentialFile.Unreadable) {
        guard case .object(let members) = value else { throw .init(reason: "wrong type at '\(path)'") }
        self.members = members
        self.prefix = path
    }

    func path(of key: String) -> String { prefix.isEmpty ? key : prefix + "." + key }

    /// The member `key`, required: absent is "missing", `null` is a wrong type.
    private func required(_ key: String) throws(CredentialFile.Unreadable) -> JSONValue {
        guard let value = members[key] else { throw .init(reason: "missing '\(key)'") }
        return value
    }

    /// The member `key`, optional: `nil` when absent or `null`.
    private func optional(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    private func wrongType(_ key: String) -> CredentialFile.Unreadable { .init(reason: "wrong type at '\(path(of: key))'") }

    func string(_ key: String) throws(CredentialFile.Unreadable) -> String {
        guard case .string(let text) = try required(key) else { throw wrongType(key) }
        return text
    }

    func optionalString(_ key: String) throws(CredentialFile.Unreadable) -> String? {
        guard let value = optional(key) else { return nil }
        guard case .string(let text) = value else { throw wrongType(key) }
        return text
    }

    func optionalBool(_ key: String) throws(CredentialFile.Unreadable) -> Bool? {
        guard let value = optional(key) else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(key) }
        return flag
    }

    func optionalNumber(_ key: String) throws(CredentialFile.Unreadable) -> Double? {
        guard let value = optional(key) else { return nil }
        guard case .number(let number) = value else { throw wrongType(key) }
        return number
    }

    func date(_ key: String) throws(CredentialFile.Unreadable) -> Date {
        guard case .number(let seconds) = try required(key) else { throw wrongType(key) }
        return Date(timeIntervalSince1970: seconds)
    }

    func optionalDate(_ key: String) throws(CredentialFile.Unreadable) -> Date? {
        guard let value = optional(key) else { return nil }
        guard case .number(let seconds) = value else { throw wrongType(key) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A port: a whole number from 0 to 65535 (what decoding a `UInt16` accepts).
    func port(_ key: String) throws(CredentialFile.Unreadable) -> UInt16 {
        guard case .number(let number) = try required(key), let port = UInt16(exactly: number) else { throw wrongType(key) }
        return port
    }

    func array(_ key: String) throws(CredentialFile.Unreadable) -> [JSONValue] {
        guard case .array(let elements) = try required(key) else { throw wrongType(key) }
        return elements
    }

    func optionalArray(_ key: String) throws(CredentialFile.Unreadable) -> [JSONValue]? {
        guard optional(key) != nil else { return nil }
        return try array(key)
    }

    func optionalStrings(_ key: String) throws(CredentialFile.Unreadable) -> [String]? {
        guard optional(key) != nil else { return nil }
        return try strings(key)
    }

    func strings(_ key: String) throws(CredentialFile.Unreadable) -> [String] {
        var strings: [String] = []
        for (index, element) in try array(key).enumerated() {
            guard case .string(let text) = element else { throw .init(reason: "wrong type at '\(path(of: key)).\(index)'") }
            strings.append(text)
        }
        return strings
    }

    func object(_ key: String) throws(CredentialFile.Unreadable) -> RecordObject {
        try RecordObject(try required(key), path: path(of: key))
    }

    func optionalObject(_ key: String) throws(CredentialFile.Unreadable) -> RecordObject? {
        guard let value = optional(key) else { return nil }
        return try RecordObject(value, path: path(of: key))
    }

    func enumeration<Value: RawRepresentable<String>>(_ key: String, _ type: Value.Type) throws(CredentialFile.Unreadable) -> Value {
        guard case .string(let text) = try required(key) else { throw wrongType(key) }
        guard let value = Value(rawValue: text) else { throw .init(reason: "unknown value at '\(path(of: key))'") }
        return value
    }

    func optionalEnumeration<Value: RawRepresentable<String>>(_ key: String, _ type: Value.Type) throws(CredentialFile.Unreadable) -> Value? {
        guard optional(key) != nil else { return nil }
        return try enumeration(key, type)
    }
}
