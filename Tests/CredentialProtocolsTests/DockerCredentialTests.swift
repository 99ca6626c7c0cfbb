import CredentialProtocols
import Foundation
import SFAuthModel
import Testing

/// Docker's credential helper protocol: registries as clients name them, and the JSON answers.
struct DockerCredentialTests {
    @Test(arguments: [
        ("127.0.0.1:5055", "127.0.0.1:5055"),  // skopeo: the bare host:port, no newline
        ("127.0.0.1:5055\n", "127.0.0.1:5055"),  // a person's echo
        ("Registry.Example", "registry.example"),
        ("https://registry.example/", "registry.example"),
        ("http://127.0.0.1:5000/v2/team/app", "127.0.0.1:5000"),
        ("https://index.docker.io/v1/", "docker.io"),  // the Docker CLI's name for Docker Hub
        ("registry-1.docker.io", "docker.io"),
        ("index.docker.io:443", "index.docker.io:443"),  // a port makes it another key, as clients see it
        ("[::1]:5000", "[::1]:5000"),
    ])
    func aServerURLIsReadAsTheRegistryItNames(text: String, registry: String) {
        #expect(DockerCredential.registry(fromServerURL: text) == registry)
    }

    @Test(arguments: [
        "", "   ", "ftp://registry.example", "user@registry.example", "registry.example:0", "registry.example:99999",
        "registry.example:http", "[::1", "reg istry", "a:b:c", "regi\u{202E}stry.example", "bücher.example", "r.example\u{7}",
    ])
    func aServerURLWithNoRegistryIsNone(text: String) {
        #expect(DockerCredential.registry(fromServerURL: text) == nil)
    }

    @Test func setupDockerTakesARegistryNotARepository() throws {
        #expect(try DockerCredential.registry(parsing: "127.0.0.1:5055") == "127.0.0.1:5055")
        #expect(try DockerCredential.registry(parsing: "https://Registry.Example/") == "registry.example")
        #expect(try DockerCredential.registry(parsing: "docker.io") == "docker.io")
        for bad in ["127.0.0.1:5055/team", "registry.example/team/app", "ssh://registry.example", "", "registry.example:", "a b"] {
            let error = #expect(throws: OAuthError.self) { try DockerCredential.registry(parsing: bad) }
            #expect(error?.recovery == .fixConfiguration, "\(bad)")
        }
        let repository = #expect(throws: OAuthError.self) { try DockerCredential.registry(parsing: "127.0.0.1:5055/team") }
        #expect("\(repository.map { $0.description(advising: { _ in "" }) } ?? "")".contains("give the registry alone"))
    }

    @Test func dockerHubGetsTheDockerCLIsKeyToo() {
        #expect(DockerCredential.configKeys(for: "docker.io") == ["docker.io", "https://index.docker.io/v1/"])
        #expect(DockerCredential.configKeys(for: "127.0.0.1:5055") == ["127.0.0.1:5055"])
    }

    @Test func theAnswersAreTheJSONClientsRead() throws {
        let answer = DockerCredential.answer(serverURL: "127.0.0.1:5055", username: "<token>", secret: "a\"b\\c/d")
        #expect(answer == #"{"ServerURL":"127.0.0.1:5055","Username":"<token>","Secret":"a\"b\\c/d"}"#)
        // What docker-credential-helpers' client decodes.
        struct Credentials: Decodable, Equatable { var ServerURL, Username, Secret: String }
        #expect(
            try JSONDecoder().decode(Credentials.self, from: Data(answer.utf8))
                == Credentials(ServerURL: "127.0.0.1:5055", Username: "<token>", Secret: "a\"b\\c/d"))
        #expect(
            DockerCredential.list(["b.example": "oauth2accesstoken", "a.example:5000": "<token>"])
                == #"{"a.example:5000":"<token>","b.example":"oauth2accesstoken"}"#)
        #expect(DockerCredential.list([:]) == "{}")
    }

    @Test func aStoreRequestIsReadWithoutNeedingItsShape() {
        let request = DockerCredential.StoreRequest.reading(Array(#"{"ServerURL":"r.example","Username":"u","Secret":"s"}"#.utf8))
        #expect(request == DockerCredential.StoreRequest(serverURL: "r.example", username: "u", secret: "s"))
        #expect(DockerCredential.StoreRequest.reading(Array("not json".utf8)) == nil)
    }

    @Test func onlyARunAsTheHelpersNameIsTurnedIntoTheSubcommand() {
        #expect(DockerCredential.mainProgramArguments(for: ["/usr/bin/docker-credential-sfauth", "get"]) == ["docker-credential", "get"])
        #expect(DockerCredential.mainProgramArguments(for: ["docker-credential-sfauth"]) == ["docker-credential"])
        #expect(DockerCredential.mainProgramArguments(for: ["/usr/bin/sfauth", "get"]) == nil)
        #expect(DockerCredential.mainProgramArguments(for: ["/tmp/docker-credential-sfauth-old", "get"]) == nil)
    }

    @Test func theRegistrationsFileRoundTrips() throws {
        let registrations = DockerRegistrations(registries: [
            "127.0.0.1:5055": .init(account: "id-1", username: "<token>"), "r.example": .init(account: "id-2", username: "oauth2accesstoken"),
        ])
        let bytes = registrations.encoded()
        #expect(try DockerRegistrations(decoding: bytes) == registrations)
        #expect(bytes.last == 0x0A)
        #expect(try DockerRegistrations(decoding: Array(#"{"registries":{}}"#.utf8)) == DockerRegistrations())
        #expect(throws: DockerRegistrations.DecodingFailure.self) { try DockerRegistrations(decoding: Array("[]".utf8)) }
        #expect(registrations.registries["127.0.0.1:5055"]?.isIdentityToken == true)
        #expect(registrations.registries["r.example"]?.isIdentityToken == false)
        // A per-call token is recorded only when one is asked for, and the front end leaves it to the main program.
        let plain = DockerRegistrations.Entry(account: "a", username: "u", target: TokenTarget(), exchange: false)
        #expect(plain.isAccountsOwnToken && plain.target == nil && plain.exchange == nil)
        #expect(String(decoding: DockerRegistrations(registries: ["r": plain]).encoded(), as: UTF8.self).contains("target") == false)
        let narrow = DockerRegistrations.Entry(account: "a", username: "u", target: TokenTarget(scopes: ["read"]), minValid: "10m")
        #expect(!narrow.isAccountsOwnToken)
        #expect(try DockerRegistrations(decoding: DockerRegistrations(registries: ["r": narrow]).encoded()).registries["r"] == narrow)
        #expect(!DockerRegistrations.Entry(account: "a", username: "u", resource: "https://api.example/").isAccountsOwnToken)
    }
}
