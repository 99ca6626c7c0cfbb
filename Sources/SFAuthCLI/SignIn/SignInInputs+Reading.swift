import FoundationEssentials
import SFAuth

extension SignInInputs {
    /// Reads what `request` needs besides the command line: the client secret, the SFDX auth URL,
    /// the stored account it signs in to again, and — loaded when the plan asks for it — the
    /// configuration.
    ///
    /// - Parameters:
    ///   - request: the command line.
    ///   - store: the store the account is kept in.
    ///   - context: the process's context (the environment, the terminal session).
    package static func read(for request: SignInRequest, store: FileCredentialStore, context: CommandContext) throws(OAuthError) -> SignInInputs {
        let settings = context.settings
        let clientFile = try request.clientFile.map { path throws(OAuthError) in try readGoogleClientFile(path) }
        let clientSecret = try readClientSecret(file: request.clientSecretFile) ?? clientFile?.clientSecret ?? context.clientSecret
        let sfdx = try request.sfdxURLFile.map { path throws(OAuthError) in try readSFDXAuthURL(path) }
        let flags = clientFile.map { request.flags.adding($0) } ?? request.flags
        let configuration: @Sendable (Bool) throws(OAuthError) -> LoadedConfiguration = { reportingMissing throws(OAuthError) in
            try LoadedConfiguration.load(
                flags: flags, configPath: request.configPath, profileName: request.profile,
                settings: settings, reportingMissing: reportingMissing)
        }
        var inputs = SignInInputs(configuration: configuration, sfdx: sfdx, clientSecret: clientSecret, session: context.session)
        if sfdx == nil {
            if let account = request.account {
                inputs.storedAccount = try store.load(identifier: try AccountResolver(store: store).identifier(for: account))
            } else if request.force, let resource = request.resource {
                // A fresh sign-in to the resource's own account, not to the default one.
                inputs.storedAccount = try AccountResolver(store: store).identifier(boundTo: resource).flatMap { identifier throws(OAuthError) in
                    try store.load(identifier: identifier)
                }
            } else if request.force {
                inputs.storedAccount = try store.loadDefault()
            } else if let lapsed = lapsedDefault(for: request, in: store, configuration: configuration) {
                inputs.storedAccount = lapsed
                inputs.storedAccountIsTheLapsedDefault = true
            }
        }
        return inputs
    }

    /// The default account, when a plain `sfauth login` — no grant, no server, profile or
    /// configuration choosing one — meets it needing a new sign-in: that is the sign-in meant, not
    /// Salesforce's (which would also take the default away from it).
    private static func lapsedDefault(
        for request: SignInRequest, in store: FileCredentialStore,
        configuration: (Bool) throws(OAuthError) -> LoadedConfiguration
    ) -> OAuthCredentials? {
        guard request.grant == nil, request.resource == nil, let account = try? store.loadDefault(), account.needsLogin,
            let preset = (try? configuration(true))?.resolved.preset,
            preset.source == .builtIn, preset.value == Preset.defaultName
        else { return nil }
        return account
    }

    /// The Google client file at `path`.
    private static func readGoogleClientFile(_ path: String) throws(OAuthError) -> GoogleClientFile {
        guard let contents = FileManager.default.contents(atPath: path) else { throw .configuration("cannot read the client file \(path)") }
        return try GoogleClientFile(parsing: Array(contents), path: path)
    }

    /// The first line of `--client-secret-file`; `nil` when no file is given.
    private static func readClientSecret(file: String?) throws(OAuthError) -> String? {
        guard let file else { return nil }
        guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw .configuration("cannot read the client secret file \(file)")
        }
        let secret = contents.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard !secret.isEmpty else { throw .configuration("the client secret file \(file) is empty") }
        return secret
    }

    /// The SFDX auth URL in the first non-empty line of `path` (`-`: standard input).
    private static func readSFDXAuthURL(_ path: String) throws(OAuthError) -> SFDXAuthURL {
        let bytes: [UInt8]
        if path == "-" {
            bytes = StandardInput.readAll()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw .configuration("cannot read the SFDX auth URL file \(path)")
            }
            bytes = Array(contents)
        }
        let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first { !$0.allSatisfy(\.isWhitespace) }
        guard let line else { throw .configuration("the SFDX auth URL file \(path) is empty") }
        return try SFDXAuthURL(parsing: String(line))
    }
}

extension ConfigurationLayer {
    /// The command line's layer with a Google client file's client id (unless `--client-id` gave
    /// one), and the `google` preset unless the command line chose another.
    fileprivate func adding(_ file: GoogleClientFile) -> ConfigurationLayer {
        var layer = self
        if layer[.clientId] == nil { layer.set(.clientId, .text(file.clientId), from: .flag("--client-file")) }
        if layer[.preset] == nil {
            layer.set(.preset, .text(ProviderPreset.google.name), from: .flag("--client-file"))
        }
        return layer
    }
}
