import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth setup-docker`: makes Docker (and skopeo, podman, buildah) get a registry's credentials
/// from `docker-credential-sfauth`.
struct SetupDockerCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "setup-docker",
        abstract: "Configure Docker and skopeo to use sfauth's access token for a registry.",
        discussion: """
            Writes "credHelpers": {"HOST[:PORT]": "sfauth"} into Docker's config.json (--docker-config DIR, \
            else $DOCKER_CONFIG, else ~/.docker), changing nothing else in the file (a file that is not \
            valid JSON is refused and left as it is), and records which account answers for the \
            registry beside sfauth's accounts. The account (--account, else the default one now) is \
            recorded by its identifier, which no alias or later sign-in can take over. Docker, skopeo, \
            podman and buildah then run docker-credential-sfauth get, which prints the account's access \
            token (refreshed when needed) as the password. The key is exactly host[:port], as clients \
            look it up; for Docker Hub (docker.io) https://index.docker.io/v1/ is written too.

            The username: oauth2accesstoken by default (a fixed name with the token as the password, as \
            Google's registries and many OpenID Connect-fronted registries take it), --username NAME for \
            another, or --identity-token to hand the token over as an identity token (the client trades \
            it at the registry's token endpoint as an OAuth 2 refresh_token). Running it again replaces \
            the setup; --remove undoes it (the credHelpers entry, when it is sfauth's, and the record). With \
            --scope, --audience or --resource the registry gets a per-call token from the account's sign-in \
            instead of the account's own, as sfauth token --scope/--audience/--resource gives it.

            docker-credential-sfauth must be on your PATH (the .deb installs /usr/bin/docker-credential-sfauth); \
            it says how to link it when it is not.

            Examples:
              sfauth setup-docker --registry registry.example --account work
              skopeo inspect docker://registry.example/team/app:latest
              sfauth setup-docker --registry 127.0.0.1:5000 --identity-token
              sfauth setup-docker --registry registry.example --remove
            """
    )

    @Option(help: ArgumentHelp("The registry: host[:port] (https:// or http:// in front is dropped).", valueName: "host[:port]"))
    var registry: String

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account now.", valueName: "account"))
    var account: String?

    @Flag(help: "Answer with Username <token>: the registry gets the access token as an identity token (OAuth 2 refresh_token).")
    var identityToken = false

    @Option(help: ArgumentHelp("The username to answer with the token as the password. Default: oauth2accesstoken.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("Docker's configuration directory. Default: $DOCKER_CONFIG, else ~/.docker.", valueName: "dir"))
    var dockerConfig: String?

    @Flag(help: "Undo it: remove the registry's credHelpers entry (when it is sfauth's) and sfauth's record of it.")
    var remove = false

    @Option(
        help: ArgumentHelp(
            "Answer with a token for this resource from the account's sign-in (RFC 8707), as sfauth token --resource gives it.", valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens (recorded for the registry)")
    var targetOptions: TargetOptions

    func validate() throws {
        if identityToken && username != nil { throw ValidationError("Give --identity-token or --username, not both.") }
        if remove && (identityToken || username != nil || account != nil || resource != nil || !targetOptions.arguments.isEmpty) {
            throw ValidationError("--remove takes only --registry (and --docker-config).")
        }
        if let username, username.isEmpty || username.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw ValidationError("--username must be a name without control characters.")
        }
    }

    func run(in context: CommandContext) throws {
        let target = try DockerCredential.registry(parsing: registry)
        let file = try DockerConfigFile(option: dockerConfig, environment: context.environment)
        let book = DockerRegistryBook(directory: try context.settings.credentialsDirectory(app: .sfauth))
        var contents = try file.read()
        let keys = DockerCredential.configKeys(for: target)
        if remove {
            try undo(target, keys: keys, file: file, contents: &contents, book: book)
            return
        }
        let chosen = try context.accounts().store.accountForConfiguration(named: account)
        let name = identityToken ? DockerCredential.identityTokenUsername : username ?? DockerCredential.defaultUsername
        let wanted = targetOptions.wanted()
        if let resource { try ProtectedResource.requireValid(resource) }
        let replaced = keys.compactMap { contents.text.helper(for: $0) }.filter { $0 != DockerCredential.helperName }
        for key in keys { contents.text.setHelper(DockerCredential.helperName, for: key) }
        // The record first: a credHelpers entry without it would only make get answer "not found".
        try book.update { registrations in
            registrations.registries[target] = DockerRegistrations.Entry(
                account: chosen.identifier, username: name, target: wanted.target, resource: resource, exchange: targetOptions.exchange,
                minValid: targetOptions.minValid)
            return true
        }
        try file.write(contents.text, mode: contents.mode)
        let perCall = TokenTarget(scopes: wanted.target.scopes, audience: wanted.target.audience, resource: resource)
        let token = perCall.isEmpty ? "its access token" : "a token for \(TerminalText.escaped(perCall.summary)) from its sign-in"
        let answer = identityToken ? "\(token) as an identity token" : "username \(TerminalText.escaped(name)) and \(token) as the password"
        print(
            "Docker and skopeo now ask docker-credential-sfauth for \(target), with the account \(TerminalText.escaped(chosen.displayLabel)): \(answer)."
        )
        print(
            "(credHelpers in \(file.path)\(replaced.isEmpty ? "" : ", replacing \(replaced.map { TerminalText.escaped($0) }.joined(separator: ", "))"); the account in \(book.path).)"
        )
        print("Check it: skopeo inspect docker://\(target)/REPOSITORY:TAG  (or docker pull \(target)/REPOSITORY:TAG)")
        if let warning = HelperOnPath.warning(environment: context.environment, executablePath: context.executablePath) {
            StandardError.line(warning)
        }
    }

    /// `--remove`: sfauth's credHelpers entries go (another helper's stay), then the record.
    private func undo(
        _ target: String, keys: [String], file: DockerConfigFile, contents: inout DockerConfigFile.Contents, book: DockerRegistryBook
    ) throws {
        let others = keys.compactMap { contents.text.helper(for: $0) }.filter { $0 != DockerCredential.helperName }
        let removedEntry = keys.map { contents.text.removeHelper(DockerCredential.helperName, for: $0) }.contains(true)
        if removedEntry { try file.write(contents.text, mode: contents.mode) }
        let removedRecord = try book.update { $0.registries.removeValue(forKey: target) != nil }
        if !removedEntry && !removedRecord {
            print("Nothing to undo: \(target) was not set up for sfauth (\(file.path)).")
        } else {
            print("Docker and skopeo no longer ask sfauth for \(target) (\(file.path)); the account stays signed in.")
        }
        if !others.isEmpty {
            print(
                "Its credHelpers entry names another helper (\(others.map { TerminalText.escaped($0) }.joined(separator: ", "))), which was left as it is."
            )
        }
    }
}
