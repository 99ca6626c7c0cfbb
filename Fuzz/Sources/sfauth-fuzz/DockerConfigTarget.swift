import CredentialProtocols

/// Docker's `config.json` as `sfauth setup-docker` edits it (`DockerConfigText`): whatever it
/// accepts must stay a JSON object after `credHelpers` entries are set and removed — each edit
/// read back by the same checker — with the entry there after setting and gone after removing,
/// and another helper's entry never removed. Then the registry names a client may send `get`.
///
/// Input: the file's bytes.
@Sendable func fuzzDockerConfig(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    if var text = try? DockerConfigText(bytes) {
        let key = "127.0.0.1:5055"
        let before = text.helper(for: key)
        text.setHelper("sfauth", for: key)
        guard let set = try? DockerConfigText(text.bytes) else { preconditionFailure("DockerConfigText: setting a helper broke the JSON") }
        precondition(set.helper(for: key) == "sfauth", "DockerConfigText: the helper set is not there")
        text.setHelper("sfauth", for: "docker.io")
        precondition(text.removeHelper("sfauth", for: key), "DockerConfigText: sfauth's helper was not removed")
        guard let removed = try? DockerConfigText(text.bytes) else { preconditionFailure("DockerConfigText: removing a helper broke the JSON") }
        precondition(removed.helper(for: key) == nil && removed.helper(for: "docker.io") == "sfauth", "DockerConfigText: removed the wrong entry")
        if let before, before != "sfauth" {
            var other = try? DockerConfigText(bytes)
            precondition(other?.removeHelper("sfauth", for: key) == false, "DockerConfigText: another helper's entry was removed")
        }
    }
    for line in FuzzInput.text(bytes).split(separator: "\n", omittingEmptySubsequences: false).prefix(8) {
        if let registry = DockerCredential.registry(fromServerURL: String(line)) {
            precondition(DockerCredential.registry(fromServerURL: registry) == registry, "DockerCredential: \(registry) does not name itself")
        }
        _ = try? DockerCredential.registry(parsing: String(line))
    }
}
