import FoundationEssentials
import SFAuth

/// What a protected resource and its authorization server say to a sign-in that starts from a URL:
/// the `WWW-Authenticate` challenge (`BearerChallenge.of`), the resource's metadata
/// (`ProtectedResourceMetadata.decode`, against a fixed resource and the one it names) and the
/// choice of its server, and a registration answer (`ClientRegistration.decode`) with the
/// redirect it yields — plus the URL rules on every URL they name.
///
/// Input: an HTTP response (`FuzzInput.response`); its `www-authenticate` header is the challenge,
/// its body the metadata and the registration answer alike.
@Sendable func fuzzProtectedResource(_ data: UnsafeRawBufferPointer) {
    var response = FuzzInput.response(data)
    for status in [response.status, 401, 403] {
        response.status = status
        if let challenge = BearerChallenge.of(response), let metadata = challenge.resourceMetadata {
            _ = ProtectedResource.isOwnMetadataLocation(metadata, for: "https://mcp.example/mcp")
            _ = ProtectedResource.metadataLocations(for: metadata)
        }
    }
    response.status = 200
    var resources = ["https://mcp.example/mcp"]
    if let named = JSONValue.parse(response.body)?["resource"]?.stringValue { resources.append(named) }
    for resource in resources {
        _ = try? ProtectedResource.canonical(resource)
        _ = ProtectedResource.covers("https://mcp.example/mcp/tools", resource: resource)
        do {
            let metadata = try ProtectedResourceMetadata.decode(response, resource: resource, location: "https://mcp.example/m")
            let server = try metadata.authorizationServer(choosing: nil)
            do { try ProtectedResource.requireAuthorizationServer(server, for: resource) } catch { consume(error) }
            _ = DiscoveryDocument.authorizationServerLocations(issuer: server)
        } catch {
            consume(error)
        }
    }
    for status in [201, 400] {
        response.status = status
        do {
            let client = try ClientRegistration.decode(
                response, issuer: "https://as.example", redirectURI: "http://127.0.0.1:43123/callback", scopes: ["mcp"],
                now: Date(timeIntervalSince1970: 1_800_000_000))
            _ = client.redirect
            _ = client.isUsable(for: ["mcp"], at: Date(timeIntervalSince1970: 1_800_000_000))
        } catch {
            consume(error)
        }
    }
}
