import FoundationEssentials
import Testing

@testable import SFAuthModel

/// `CredentialFile.decode` reads records by hand; these tests hold it to the synthesized `Codable`
/// decoder it replaced (`JSONDecoder`, dates as Unix seconds): the same values from every record,
/// and a refusal wherever that decoder refused.
struct CredentialFileReadingTests {
    /// A record with every member set, so a member added to `OAuthCredentials` but not read by hand
    /// makes `everyMemberRoundTrips` fail.
    static var full: OAuthCredentials {
        var server = AuthorizationServer(
            authorizationEndpoint: "https://idp.example/a", tokenEndpoint: "https://idp.example/t",
            revocationEndpoint: "https://idp.example/r", userinfoEndpoint: "https://idp.example/u", issuer: "https://idp.example",
            jwksURI: "https://idp.example/k", deviceAuthorizationEndpoint: "https://idp.example/d", flavor: .salesforce)
        server.issuerInAuthorizationResponse = true
        var credentials = OAuthCredentials(
            identifier: "idp.example/u", server: server, clientId: "c", redirectURI: "http://localhost:1717/cb",
            accessToken: "at", tokenType: "Bearer", issuedAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        credentials.refreshToken = "rt"
        credentials.refreshTokenExpiresAt = Date(timeIntervalSince1970: 1_715_897_600)
        credentials.refreshTokenLifetime = 15_897_600
        credentials.expiresAt = Date(timeIntervalSince1970: 1_700_003_600.5)
        credentials.scopes = ["openid", "api"]
        credentials.idToken = "h.p.s"
        credentials.instanceURL = "https://na1.example"
        credentials.identityURL = "https://idp.example/id/o/u"
        credentials.userId = "u"
        credentials.organizationId = "o"
        credentials.username = "user@example.com"
        credentials.displayName = "Ünïcode Name"
        credentials.email = "user@example.com"
        credentials.alias = "work"
        credentials.status = .loginRequired
        credentials.refreshTokenInSecretStore = false
        credentials.jwtBearerRenewal = JWTBearerRenewal(keyFile: "/k.pem", keyID: "kid", subject: "s", audience: "https://aud")
        credentials.obtainedBy = .deviceCode
        credentials.authorizationResponseIssuer = "https://idp.example"
        credentials.clientSecretBinding = ClientSecretBinding(salt: "c2FsdA", digest: "ZGlnZXN0")
        credentials.clientSecret = "s3cret"
        credentials.clientAuthentication = .basic
        credentials.resource = "https://mcp.example/mcp"
        credentials.recipe = SignInRecipe(
            grant: .browser, scopes: ["openid"], callbackHost: "localhost", callbackPort: 1717, callbackPath: "/cb",
            parameters: [.init(name: "prompt", value: "login")], username: "user@example.com")
        credentials.targetedTokens = [
            TargetedToken(
                target: TokenTarget(scopes: ["read"], audience: "api", resource: "https://api.example/"), accessToken: "at-read",
                tokenType: "Bearer", issuedAt: Date(timeIntervalSince1970: 1_700_000_100), expiresAt: Date(timeIntervalSince1970: 1_700_000_700),
                scopes: ["read"], obtainedBy: .exchange),
            TargetedToken(
                target: TokenTarget(scopes: ["write"]), accessToken: "at-write", tokenType: "Bearer",
                issuedAt: Date(timeIntervalSince1970: 1_700_000_100), expiresAt: nil, scopes: nil, obtainedBy: .refresh),
        ]
        return credentials
    }

    static func synthesized(_ bytes: [UInt8]) -> OAuthCredentials? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(OAuthCredentials.self, from: Data(bytes))
    }

    @Test func everyMemberRoundTrips() throws {
        let bytes = CredentialFile.encode(Self.full)
        #expect(try CredentialFile.decode(bytes) == Self.full)
        #expect(Self.synthesized(bytes) == Self.full)
    }

    /// Every member of the full record, one at a time: removed, `null`, and of each wrong type.
    /// The hand reader must accept exactly what the synthesized decoder accepts, with the same value.
    @Test func agreesWithTheSynthesizedDecoderOnEveryMutation() throws {
        let original = try #require(JSONValue.parse(CredentialFile.encode(Self.full)))
        var checked = 0
        for path in Self.memberPaths(of: original) {
            for replacement: JSONValue? in [nil, .null, .string("x"), .number(1.5), .number(70000), .bool(true), .array([]), .object([:])] {
                let mutated = Self.replacing(path, in: original, with: replacement)
                let bytes = Array(try JSONEncoder().encode(mutated))
                let expected = Self.synthesized(bytes).flatMap(Self.normalized)
                let actual = try? CredentialFile.decode(bytes)
                #expect(actual == expected, "\(path.joined(separator: ".")) = \(String(describing: replacement))")
                checked += 1
            }
        }
        #expect(checked > 250)
    }

    @Test func refusalsSayWhere() {
        func reason(_ path: [String], _ value: JSONValue?) -> String? {
            let original = JSONValue.parse(CredentialFile.encode(Self.full))!
            let bytes = Array(try! JSONEncoder().encode(Self.replacing(path, in: original, with: value)))
            do {
                _ = try CredentialFile.decode(bytes)
                return nil
            } catch { return error.reason }
        }
        #expect(reason(["accessToken"], nil) == "missing 'accessToken'")
        #expect(reason(["accessToken"], .null) == "wrong type at 'accessToken'")
        #expect(reason(["server", "issuer"], .number(1)) == "wrong type at 'server.issuer'")
        #expect(reason(["server", "flavor"], .string("other")) == "unknown value at 'server.flavor'")
        #expect(reason(["scopes"], .array([.number(1)])) == "wrong type at 'scopes.0'")
        #expect(reason(["recipe", "callbackPort"], .number(70000)) == "wrong type at 'recipe.callbackPort'")
        #expect(reason(["recipe", "parameters"], .array([.object(["name": .string("n")])])) == "missing 'value'")
        #expect(reason([], .array([])) == "wrong type at ''")
    }

    /// What `decode` adds to what the synthesized decoder gives (the refresh token's place), and the
    /// token checks it makes.
    private static func normalized(_ credentials: OAuthCredentials) -> OAuthCredentials? {
        var credentials = credentials
        if credentials.refreshToken != nil && credentials.refreshTokenInSecretStore == nil { credentials.refreshTokenInSecretStore = false }
        guard CredentialFile.isTokenText(credentials.accessToken), credentials.refreshToken.map(CredentialFile.isTokenText) != false else {
            return nil
        }
        return credentials
    }

    /// The paths of every member of every object in `value` (arrays of objects: their first element).
    private static func memberPaths(of value: JSONValue, prefix: [String] = []) -> [[String]] {
        switch value {
        case .object(let members):
            return members.keys.sorted().flatMap { key in [prefix + [key]] + memberPaths(of: members[key]!, prefix: prefix + [key]) }
        case .array(let elements):
            return elements.first.map { memberPaths(of: $0, prefix: prefix + ["0"]) } ?? []
        default: return []
        }
    }

    /// `value` with the member at `path` replaced (`nil`: removed; an empty path: the whole value).
    private static func replacing(_ path: [String], in value: JSONValue, with replacement: JSONValue?) -> JSONValue {
        guard let head = path.first else { return replacement ?? .null }
        switch value {
        case .object(var members):
            members[head] = path.count == 1 ? replacement : replacing(Array(path.dropFirst()), in: members[head]!, with: replacement)
            return .object(members)
        case .array(var elements):
            let index = Int(head)!
            if path.count == 1 {
                if let replacement { elements[index] = replacement } else { elements.remove(at: index) }
            } else {
                elements[index] = replacing(Array(path.dropFirst()), in: elements[index], with: replacement)
            }
            return .array(elements)
        default: return value
        }
    }
}
