import CredentialProtocols

/// A command line the front end may answer by itself: one of the hot paths, in exactly the forms
/// the main program's argument parser reads the same way. Anything else — another option, an
/// option after the operation, a value the parser would read differently or refuse — is not one of
/// these, and the main program answers it.
enum HotCommand: Equatable {
    /// `token [--account A | --resource URL] [--format token|headers-json]`.
    case token(account: String?, resource: String? = nil, headersJSON: Bool = false)
    /// `kube-credential [--account A]`.
    case kubeCredential(account: String?)
    /// `git-credential [--account A] --host H [--host H…] OPERATION`, the form `sfauth setup-git`
    /// writes (git appends the operation).
    case gitCredential(account: String?, hosts: [String], operation: String)
    /// `exec [--account A] -- COMMAND [ARGUMENT…]`.
    case exec(account: String?, command: [String])
    /// `docker-credential get`: a run as `docker-credential-sfauth get`.
    case dockerCredentialGet

    /// Reads `arguments` (without the program's name); `nil` when they are not a hot path's.
    init?(_ arguments: [String]) {
        guard let name = arguments.first else { return nil }
        var rest = arguments.dropFirst()
        switch name {
        case "token":
            guard let options = Options(reading: &rest, allowingHosts: false, allowingTokenOptions: true), rest.isEmpty,
                options.account == nil || options.resource == nil
            else { return nil }
            self = .token(account: options.account, resource: options.resource, headersJSON: options.format == "headers-json")
        case "kube-credential":
            guard let options = Options(reading: &rest, allowingHosts: false), rest.isEmpty else { return nil }
            self = .kubeCredential(account: options.account)
        case "git-credential":
            guard let options = Options(reading: &rest, allowingHosts: true), !options.hosts.isEmpty,
                rest.count == 1, let operation = rest.first, !operation.hasPrefix("-")
            else { return nil }
            self = .gitCredential(account: options.account, hosts: options.hosts, operation: operation)
        case "exec":
            guard let options = Options(reading: &rest, allowingHosts: false), rest.first == "--", rest.count > 1 else { return nil }
            self = .exec(account: options.account, command: Array(rest.dropFirst()))
        case DockerCredential.subcommand:
            guard Array(rest) == ["get"] else { return nil }
            self = .dockerCredentialGet
        default:
            return nil
        }
    }

    /// The options before the operands: `--account A` (once), for git `--host H` (repeatable), for
    /// `token` `--resource URL` and `--format token|headers-json` (once each), each also as
    /// `--name=value`.
    private struct Options {
        var account: String?
        var hosts: [String] = []
        var resource: String?
        var format: String?

        /// Reads options from the front of `arguments` up to the first that is not one (or `--`);
        /// `nil` for an option the front end does not know, a repeated one, a format it does not
        /// print, or a value the parser would read differently (empty, or starting with `-`).
        init?(reading arguments: inout ArraySlice<String>, allowingHosts: Bool, allowingTokenOptions: Bool = false) {
            while let argument = arguments.first, argument.hasPrefix("-"), argument != "--" {
                arguments = arguments.dropFirst()
                let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let value: String
                if parts.count == 2 {
                    value = String(parts[1])
                } else {
                    guard let next = arguments.first else { return nil }
                    value = next
                    arguments = arguments.dropFirst()
                }
                guard !value.isEmpty, !value.hasPrefix("-") else { return nil }
                switch parts[0] {
                case "--account" where account == nil: account = value
                case "--host" where allowingHosts: hosts.append(value)
                case "--resource" where allowingTokenOptions && resource == nil: resource = value
                case "--format" where allowingTokenOptions && format == nil && ["token", "headers-json"].contains(value): format = value
                default: return nil
                }
            }
        }
    }
}
