import SFAuth
import SFAuthCLI

/// The configuration file (`ConfigurationFile.parse`: the TOML subset of `config.toml`), then every
/// profile it defines looked up by name, as `--profile` does, and resolved into a configuration.
///
/// Input: the file's text.
@Sendable func fuzzConfig(_ data: UnsafeRawBufferPointer) {
    let path = "/home/me/.config/sfauth/config.toml"
    do {
        let file = try ConfigurationFile.parse(FuzzInput.text(data), path: path)
        for name in file.profileNames + [file.defaultProfile?.value, "missing"].compactMap({ $0 }) {
            do {
                let layer = try file.profile(Sourced(name, from: .file(path: path, line: 1, table: "")))
                // What `sfauth config` / `login` make of the profile: resolved over no flags or environment.
                let resolved = try ConfigurationResolver(layers: [layer]).resolve()
                for key in ["client_id", "scopes", "callback_port", "issuer", "preset"] { _ = resolved.setting(key) }
                try resolved.client.validate()
            } catch {
                consume(error)
            }
        }
    } catch {
        consume(error)
    }
}
