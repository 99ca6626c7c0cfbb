// The shared values (the account record and its file, errors, settings) are part of the core's API.
@_exported import SFAuthModel
