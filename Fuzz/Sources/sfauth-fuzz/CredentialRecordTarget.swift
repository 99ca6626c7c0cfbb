import SFAuth

/// An account record as both programs read it (`CredentialFile.decode`, by hand over `JSONParser`):
/// whatever it accepts must survive being written and read again unchanged — the store rewrites
/// records it has read.
///
/// Input: the bytes of an account file.
@Sendable func fuzzCredentialRecord(_ data: UnsafeRawBufferPointer) {
    do {
        let credentials = try CredentialFile.decode(Array(data))
        let again = try CredentialFile.decode(CredentialFile.encode(credentials))
        precondition(again == credentials, "CredentialFile: a record read, written and read again changed")
    } catch {
        _ = error.reason
    }
}
