/// The origin a provider's key names: a host name (`ghe.example.com`, taken as https) or a URL of a
/// host with nothing after it (plain http only on this machine, for tests) — what `--host`,
/// `--authority` and `--domain` take.
enum ProviderHost {
    /// `given` as an origin without a trailing slash, and its parts.
    ///
    /// - Parameters:
    ///   - name: what the value is, for the message (`GitHub host`).
    ///   - examples: host names to show in the message (`github.com, ghe.example.com`).
    /// - Throws: `OAuthError.configuration` when `given` is not a host or an http(s) URL of one, or
    ///   is plain http to another machine.
    static func origin(_ given: String, name: String, examples: String) throws(OAuthError) -> (url: String, parts: EndpointURL.Parts) {
        var url = given.contains("://") ? given : "https://" + given
        while url.hasSuffix("/") { url.removeLast() }
        guard let parts = EndpointURL.parts(of: url), !url.dropFirst(parts.scheme.count + 3).contains("/") else {
            throw .configuration("the \(name) '\(TerminalText.escaped(given))' is not a host name (\(examples)) or an https URL")
        }
        try EndpointURL.requireSecure(url, name: name)
        return (url, parts)
    }
}
