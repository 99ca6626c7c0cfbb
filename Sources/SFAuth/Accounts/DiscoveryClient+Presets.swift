import SFAuthCore

extension DiscoveryClient {
    /// The authorization server of `preset` at the user's own `instance`: known endpoints as they
    /// are (Salesforce, GitHub), else the preset's issuer discovered, with the endpoints the preset
    /// puts in place (a Cognito user pool's domain).
    ///
    /// ```swift
    /// let discovery = DiscoveryClient(cacheDirectory: nil)
    /// let server = try await discovery.server(for: .entra, at: ProviderPreset.Instance(tenant: "contoso.onmicrosoft.com"))
    /// let client = ProviderPreset.entra.client(clientId: "my-app-id")!
    /// ```
    ///
    /// - Parameters:
    ///   - preset: the provider's preset.
    ///   - instance: what points it at the user's own instance (host, issuer, tenant, …).
    ///   - instanceURL: a Salesforce My Domain, for `.salesforceMyDomain`.
    /// - Throws: `OAuthError.configuration` when the instance lacks what the preset needs (an
    ///   issuer, a My Domain) or the metadata does not fit; `.network` when it cannot be fetched.
    public func server(
        for preset: ProviderPreset, at instance: ProviderPreset.Instance = .init(), instanceURL: String? = nil
    ) async throws(OAuthError) -> AuthorizationServer {
        if let target = try preset.discoveryTarget(instance) {
            return target.applied(to: try await discover(issuer: target.issuer).server)
        }
        if case .gitHubHost = preset.serverLocation { return try GitHub.server(host: instance.host ?? GitHub.defaultHost) }
        guard let server = preset.server(instanceURL: instanceURL) else {
            throw .configuration("the \(preset.name) preset needs the org's My Domain (instanceURL)")
        }
        return server
    }
}
