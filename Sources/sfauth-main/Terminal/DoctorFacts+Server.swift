import FoundationEssentials
import SFAuth
import SFAuthCLI

extension DoctorFacts {
    /// The server `options` (`--preset`, `--issuer`, `--host`) name, resolved as `sfauth login`
    /// resolves them (over `SFAUTH_*` variables and the configuration file's profile), with its
    /// metadata as fetched and the clock of the host that answered.
    static func server(namedBy options: ConfigurationLayer, in context: CommandContext) async -> (Server, Clock) {
        // The client does not matter here, and a missing client id would hide the server's own
        // problems (an insecure issuer) behind a placeholder: a stand-in one lets them be said.
        var options = options
        options.set(.clientId, .text("sfauth-doctor"), from: .builtIn)
        let resolved: ResolvedConfiguration
        do throws(OAuthError) {
            resolved = try LoadedConfiguration.load(flags: options, settings: context.settings).resolved
        } catch {
            guard case .configuration(let problem) = error else { return (.unresolved(SFAuthWords.message(for: error)), .noServer) }
            return (.unresolved(problem.text), .noServer)
        }
        switch resolved.server {
        case .known(let server):
            let clock = await clock(against: server.issuer ?? server.tokenEndpoint, in: context)
            return (.builtIn(preset: resolved.preset?.value, authorizationEndpoint: server.authorizationEndpoint), clock)
        case .discover(let issuer, let overrides):
            let (answer, clock) = await metadata(of: issuer, in: context)
            return (.metadata(issuer: issuer, overrides: overrides, answer: answer), clock)
        case .protectedResource(let target):
            // The configuration never names one: only `login --resource` does.
            return (.unresolved("\(target.resource) is a protected resource; its server is found when signing in to it"), .noServer)
        }
    }

    /// The metadata of `issuer`, read as a sign-in reads it: OpenID Connect's location, then RFC
    /// 8414's after a 404; and the clock of the last location that answered.
    private static func metadata(of issuer: String, in context: CommandContext) async -> (MetadataAnswer, Clock) {
        let locations = DiscoveryDocument.locations(issuer: issuer)
        var clock = Clock.noServer
        for location in locations {
            do throws(OAuthError) {
                let client = try context.httpClient(connectTimeout: .seconds(5), totalTimeout: .seconds(10))
                let before = Date()
                let response = try await client.sendForOAuth(
                    HTTPRequest(method: "GET", url: location, headers: [("Accept", "application/json")]))
                clock = Self.clock(of: response, from: location, sentAt: before, answeredAt: Date())
                if response.status != 404 { return (.response(location: location, response), clock) }
            } catch {
                return (.unreachable(location: location, reason: error.description), .unreachable(url: location, reason: error.description))
            }
        }
        return (.notFound(locations: locations), clock)
    }
}
