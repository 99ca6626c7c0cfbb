import FoundationEssentials
import SFAuthModel

/// Which account answers for which registry, and with what username: what `sfauth setup-docker`
/// records and `docker-credential-sfauth get` reads. Kept as JSON beside the accounts
/// (`docker-registries.json` in the credentials directory, 0600), since the accounts it names by
/// identifier are that directory's:
///
///     {"registries": {"127.0.0.1:5000": {"account": "<identifier>", "username": "<token>"}}}
package struct DockerRegistrations: Codable, Equatable, Sendable {
    /// The file's name in the credentials directory.
    package static let fileName = "docker-registries.json"
    /// The lock file held while the file is read, changed and replaced.
    package static let lockFileName = "docker-registries.lock"

    /// What answers for one registry.
    package struct Entry: Codable, Equatable, Sendable {
        /// The account's identifier, which no alias or later sign-in can take over.
        package var account: String
        /// The `Username` answered: a registry's fixed name for a token password (default
        /// `oauth2accesstoken`), or `<token>` to hand the access token over as an identity token.
        package var username: String

        /// A per-call token instead of the account's own (`setup-docker --scope/--audience`);
        /// absent for the account's own.
        package var target: TokenTarget?
        /// A per-call resource (`setup-docker --resource URL`), as `sfauth token --resource` reads it.
        package var resource: String?
        /// Obtain the target by token exchange only (`--exchange`).
        package var exchange: Bool?
        /// `--min-valid` as given (`10m`).
        package var minValid: String?

        /// An entry.
        package init(
            account: String, username: String, target: TokenTarget? = nil, resource: String? = nil, exchange: Bool? = nil, minValid: String? = nil
        ) {
            self.account = account
            self.username = username
            self.target = target?.isEmpty == false ? target : nil
            self.resource = resource
            self.exchange = exchange == true ? true : nil
            self.minValid = minValid
        }

        /// Whether the token goes as an identity token (`Username` `<token>`).
        package var isIdentityToken: Bool { username == DockerCredential.identityTokenUsername }

        /// Whether the account's own token is what answers, as it is stored (the front end's to hand out).
        package var isAccountsOwnToken: Bool { target == nil && resource == nil && exchange != true && minValid == nil }
    }

    /// The entries by registry (`host[:port]`, as `DockerCredential.registry(parsing:)` gives it).
    package var registries: [String: Entry]

    /// Registrations.
    package init(registries: [String: Entry] = [:]) {
        self.registries = registries
    }

    /// Reads the file's bytes.
    ///
    /// - Throws: the decoder's reason when they are not this file's JSON.
    package init(decoding bytes: [UInt8]) throws(DecodingFailure) {
        do {
            self = try JSONDecoder().decode(DockerRegistrations.self, from: Data(bytes))
        } catch {
            throw DecodingFailure()
        }
    }

    /// The file's bytes: pretty JSON, keys sorted, a final newline.
    package func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Strings and a dictionary of strings: encoding cannot fail.
        return ((try? encoder.encode(self)).map(Array.init) ?? Array(#"{"registries":{}}"#.utf8)) + [0x0A]
    }

    /// The bytes are not a registrations file.
    package struct DecodingFailure: Error, Equatable {}
}
