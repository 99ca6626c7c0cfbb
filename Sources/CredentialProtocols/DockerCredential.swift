import FoundationEssentials
import SFAuthModel

/// Docker's credential helper protocol (docker/docker-credential-helpers, README "Development";
/// `client/client.go`, `credentials/error.go`): a client runs `docker-credential-<name> OPERATION`
/// and talks over the helper's standard input and output.
///
/// - `get`: stdin is the server URL as the client has it (skopeo and containers/image: the bare
///   `host:port`, no newline; the Docker CLI: `host`, or `https://index.docker.io/v1/` for Docker
///   Hub); stdout `{"ServerURL","Username","Secret"}`. `Username` `<token>` makes `Secret` an
///   identity token, which the client sends to the registry's token endpoint as an OAuth 2
///   `refresh_token` (distribution's `docs/spec/auth/oauth.md`).
/// - `store`: stdin is that JSON with the secret to keep; `erase`: stdin is the server URL;
///   `list`: stdout `{"<server URL>":"<username>"}`.
/// - A helper with nothing for a server prints `credentials not found in native keychain` and
///   exits non-zero: clients then go on without credentials. Any other failure: its message on
///   stdout (clients show it: "error getting credentials - err: exit status 3, out: `…`").
package enum DockerCredential {
    /// The suffix clients append to `docker-credential-`: the value of a `credHelpers` entry.
    package static let helperName = "sfauth"
    /// The program clients run: `docker-credential-sfauth`, a link to `sfauth`.
    package static let programName = "docker-credential-" + helperName
    /// The main program's subcommand that speaks the protocol: what the front end turns a run as
    /// `programName` into.
    package static let subcommand = "docker-credential"
    /// The not-found answer, exactly as clients compare it (`credentials.errCredentialsNotFound`).
    package static let notFound = "credentials not found in native keychain"
    /// The username that marks `Secret` as an identity token (docker/cli: `<token>`).
    package static let identityTokenUsername = "<token>"
    /// The username sent with the access token as the password when none is configured: the
    /// fixed name Google's registries document for an OAuth access token, which many
    /// OIDC-fronted registries accept as "any name, the token is the password".
    package static let defaultUsername = "oauth2accesstoken"
    /// What Docker Hub is called here, whichever of its names a client uses.
    package static let dockerHub = "docker.io"
    /// The key the Docker CLI looks Docker Hub up by (`registry.IndexServer`); containers/image
    /// uses `docker.io`.
    package static let dockerHubIndexServer = "https://index.docker.io/v1/"

    /// The command line of the main program for a run as `programName`: `[docker-credential,
    /// OPERATION…]`; `nil` when `arguments` (the program's name first) are not such a run.
    package static func mainProgramArguments(for arguments: [String]) -> [String]? {
        guard let invoked = arguments.first, invoked.split(separator: "/").last.map(String.init) == programName else { return nil }
        return [subcommand] + arguments.dropFirst()
    }

    // MARK: - Registries

    /// The registry `text` names — `host`, `host:port`, `[v6]:port`, lowercased; Docker Hub's names
    /// as `docker.io` — as a client's server URL is read: a scheme and a path are dropped (`https://
    /// index.docker.io/v1/` is Docker Hub). `nil` when no host can be read from it.
    package static func registry(fromServerURL text: String) -> String? {
        var rest = Substring(text.trimmingWhitespace())
        if let range = rest.firstRange(of: "://") {
            guard ["http", "https"].contains(rest[..<range.lowerBound].lowercased()) else { return nil }
            rest = rest[range.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        return try? hostAndPort(rest)
    }

    /// The registry `text` names, for `setup-docker --registry`: `host[:port]`, optionally after
    /// `https://` or `http://` and before a final `/`. A path (a repository or namespace: clients look
    /// helpers up by registry alone), user info or a malformed port is refused.
    package static func registry(parsing text: String) throws(OAuthError) -> String {
        var rest = Substring(text)
        if let range = rest.firstRange(of: "://") {
            guard ["http", "https"].contains(rest[..<range.lowerBound].lowercased()) else {
                throw .configuration(
                    "'\(TerminalText.escaped(text))' is not a registry: give host[:port], such as registry.example or 127.0.0.1:5000")
            }
            rest = rest[range.upperBound...]
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") {
            throw .configuration(
                "'\(TerminalText.escaped(text))' names a repository: give the registry alone (host[:port]); Docker looks helpers up by registry, not by repository"
            )
        }
        do {
            return try hostAndPort(rest)
        } catch {
            throw .configuration("'\(TerminalText.escaped(text))' is not a registry: give host[:port], such as registry.example or 127.0.0.1:5000")
        }
    }

    /// The `credHelpers` keys that make clients ask this helper for `registry`: the registry itself
    /// (containers/image, and the Docker CLI for every registry but Docker Hub), and for Docker Hub
    /// also the Docker CLI's `https://index.docker.io/v1/`.
    package static func configKeys(for registry: String) -> [String] {
        registry == dockerHub ? [dockerHub, dockerHubIndexServer] : [registry]
    }

    private struct NotARegistry: Error {}

    /// `host[:port]` checked and lowercased; Docker Hub's names folded into `docker.io`.
    private static func hostAndPort(_ text: Substring) throws(NotARegistry) -> String {
        // Host names are ASCII (IDNA's punycode for the others), so no control or bidi character
        // can come through here to a terminal.
        let allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:[]"
        guard !text.isEmpty, text.utf8.count <= 300, text.allSatisfy({ allowed.contains($0) }) else { throw NotARegistry() }
        let name = text.lowercased()
        let host: Substring
        let port: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { throw NotARegistry() }
            host = name[...close]
            let after = name[name.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw NotARegistry() }
            port = after.isEmpty ? nil : after.dropFirst()
            guard host.count > 2, host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw NotARegistry() }
        } else {
            let parts = name.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2, !parts[0].isEmpty else { throw NotARegistry() }
            host = parts[0]
            port = parts.count == 2 ? parts[1] : nil
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCIIDigit), let number = Int(port), (1...65535).contains(number) else {
                throw NotARegistry()
            }
        }
        if port == nil, ["docker.io", "index.docker.io", "registry-1.docker.io"].contains(host) { return dockerHub }
        return name
    }

    // MARK: - Answers

    /// The answer to `get`: `{"ServerURL":…,"Username":…,"Secret":…}` on one line, `ServerURL` as
    /// the client sent it. Written by hand, as `ExecCredential.render` is (the same escaping).
    package static func answer(serverURL: String, username: String, secret: String) -> String {
        #"{"ServerURL":"# + ExecCredential.jsonString(serverURL) + #","Username":"# + ExecCredential.jsonString(username)
            + #","Secret":"# + ExecCredential.jsonString(secret) + "}"
    }

    /// The answer to `list`: `{"<registry>":"<username>",…}`, keys sorted.
    package static func list(_ usernames: [String: String]) -> String {
        "{"
            + usernames.sorted { $0.key < $1.key }.map { ExecCredential.jsonString($0.key) + ":" + ExecCredential.jsonString($0.value) }
            .joined(separator: ",") + "}"
    }

    /// What `store` was asked to keep, when the request is the JSON object clients send.
    package struct StoreRequest: Decodable, Equatable, Sendable {
        /// `ServerURL`.
        package var serverURL: String?
        /// `Username`.
        package var username: String?
        /// `Secret`: compared, never shown.
        package var secret: String?

        /// A request.
        package init(serverURL: String?, username: String?, secret: String?) {
            self.serverURL = serverURL
            self.username = username
            self.secret = secret
        }

        enum CodingKeys: String, CodingKey {
            case serverURL = "ServerURL"
            case username = "Username"
            case secret = "Secret"
        }

        /// Reads the request; `nil` when it is not a JSON object.
        package static func reading(_ bytes: [UInt8]) -> StoreRequest? {
            try? JSONDecoder().decode(StoreRequest.self, from: Data(bytes))
        }
    }

    /// Standard input, all of it (clients write the request and close it; at most 1 MiB is read).
    package static func readingStandardInput() -> [UInt8] {
        StandardInput.readAll(limit: 1 << 20)
    }

    /// The server URL of a `get` or `erase` request: the text without the spaces and line ends a
    /// person's `echo` adds (clients send none), as `ServerURL` answers it.
    package static func serverURL(from request: [UInt8]) -> String {
        String(String(decoding: request, as: UTF8.self).trimmingWhitespace())
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and line ends (FoundationEssentials has
    /// no `trimmingCharacters`).
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
