// Programs that use SFAuth see the protocol values (credentials, errors, configuration) without a
// second import.
@_exported import SFAuthCore
