import Testing

@testable import SFAuthCore

@Suite struct AuthorizationRequestTests {
    let server = AuthorizationServer(
        authorizationEndpoint: "https://auth.example.com/authorize",
        tokenEndpoint: "https://auth.example.com/token")

    @Test func exactURLWithPKCEAndState() {
        let client = ClientConfiguration(clientId: "my client", scopes: ["api", "refresh_token"])
        let request = AuthorizationRequest(
            server: server, client: client, redirectURI: "http://127.0.0.1:5000/callback",
            state: "s1", pkce: PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), nonce: nil)
        #expect(
            request.url == "https://auth.example.com/authorize?response_type=code&client_id=my%20client"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&scope=api%20refresh_token&state=s1"
                + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256")
    }

    @Test func openIDAddsNonceAndExtraParametersComeLast() {
        var generator = FixedGenerator()
        let client = ClientConfiguration(
            clientId: "c", scopes: ["openid"],
            additionalAuthorizationParameters: [.init(name: "login_hint", value: "a@b.c")])
        let request = AuthorizationRequest(server: server, client: client, redirectURI: "http://127.0.0.1:1/cb", using: &generator)
        let nonce = try! #require(request.nonce)
        #expect(nonce != request.state)
        #expect(request.url.hasSuffix("&nonce=\(nonce)&login_hint=a%40b.c"))
    }

    @Test func noScopeParameterWhenNoScopes() {
        var generator = FixedGenerator()
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "c"),
            redirectURI: "http://127.0.0.1:1/cb", using: &generator)
        #expect(!request.url.contains("scope="))
        #expect(request.nonce == nil)
    }

    @Test func endpointWithQueryGetsAmpersand() {
        var generator = FixedGenerator()
        var server = server
        server.authorizationEndpoint = "https://auth.example.com/authorize?tenant=x"
        let request = AuthorizationRequest(
            server: server, client: ClientConfiguration(clientId: "c"),
            redirectURI: "http://127.0.0.1:1/cb", using: &generator)
        #expect(request.url.hasPrefix("https://auth.example.com/authorize?tenant=x&response_type=code&"))
    }

    @Test func redirectURIComesFromBoundPort() {
        #expect(RedirectConfiguration().redirectURI(boundPort: 49152) == "http://127.0.0.1:49152/callback")
        #expect(Salesforce.defaultRedirect.redirectURI(boundPort: 1717) == "http://localhost:1717/OauthRedirect")
    }

    @Test(arguments: ["0.0.0.0", "example.com", "192.168.1.1", ""])
    func nonLoopbackRedirectHostIsRejected(host: String) {
        #expect(throws: OAuthError.self) { try RedirectConfiguration(host: host).validate() }
    }

    @Test(arguments: ["callback", "/cb?x=1", "/cb#f", "/a b"])
    func badCallbackPathIsRejected(path: String) {
        #expect(throws: OAuthError.self) { try RedirectConfiguration(path: path).validate() }
    }

    @Test func endpointsMustBeHTTPSExceptLoopback() throws {
        try AuthorizationServer(
            authorizationEndpoint: "http://127.0.0.1:8000/o/authorize/",
            tokenEndpoint: "http://[::1]:8000/o/token/"
        ).validate()
        try AuthorizationServer(authorizationEndpoint: "http://localhost/a", tokenEndpoint: "https://x.example/t").validate()
        #expect(throws: OAuthError.self) {
            try AuthorizationServer(authorizationEndpoint: "http://example.com/a", tokenEndpoint: "https://x/t").validate()
        }
        #expect(throws: OAuthError.self) {
            try AuthorizationServer(authorizationEndpoint: "https://x/a", tokenEndpoint: "ftp://x/t").validate()
        }
        #expect(throws: OAuthError.self) {
            try AuthorizationServer(authorizationEndpoint: "https://x/a", tokenEndpoint: "http://127.0.0.1.example.com/t").validate()
        }
    }

    @Test func salesforcePresets() {
        let production = Salesforce.server(loginHost: Salesforce.productionLoginHost)
        #expect(production.authorizationEndpoint == "https://login.salesforce.com/services/oauth2/authorize")
        #expect(production.tokenEndpoint == "https://login.salesforce.com/services/oauth2/token")
        #expect(production.flavor == .salesforce)
        let myDomain = Salesforce.server(loginHost: "https://acme.my.salesforce.com/")
        #expect(myDomain.tokenEndpoint == "https://acme.my.salesforce.com/services/oauth2/token")
    }
}

@Suite struct AuthorizationParameterTests {
    @Test(arguments: ["state", "redirect_uri", "code_challenge", "client_id", "nonce", "scope", "response_type", "code_challenge_method", ""])
    func reservedOrEmptyNamesAreRefused(name: String) {
        let client = ClientConfiguration(clientId: "c", additionalAuthorizationParameters: [.init(name: name, value: "x")])
        #expect(throws: OAuthError.self) { try client.validate() }
    }

    @Test func providerHintsPassThrough() throws {
        let client = ClientConfiguration(
            clientId: "c",
            additionalAuthorizationParameters: [
                .init(name: "login_hint", value: "a@b"),
                .init(name: "kc_idp_hint", value: "github"),
            ])
        try client.validate()
    }
}
