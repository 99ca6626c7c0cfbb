import ArgumentParser
import SFAuth
import SFAuthCLI
import Glibc
import FoundationEssentials

/// `sfauth kube-credential`: a client-go exec credential plugin — prints an `ExecCredential` with
/// the account's access token for kubectl (and anything else built on client-go).
struct KubeCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kube-credential",
        abstract: "kubectl exec credential plugin: print an ExecCredential with the account's token.",
        discussion: """
            kubectl runs this command (see sfauth kubeconfig for the stanza) and reads one ExecCredential \
            from standard output, in the apiVersion KUBERNETES_EXEC_INFO asks for (client.authentication.k8s.io/v1, \
            or v1beta1; v1 when the variable is absent), with status.token and status.expirationTimestamp. \
            The token comes as for sfauth token: reused while valid, refreshed when needed (one refresh \
            across processes), SFAUTH_ACCESS_TOKEN when set.

            When only a new sign-in helps and kubectl says the session is interactive (and a terminal is \
            there), it signs the account in again (sfauth login --account NAME) — one sign-in at a time: \
            parallel calls wait for it and use its token. Otherwise it exits with 3 and one line on \
            standard error saying what to run. Standard output carries nothing but the ExecCredential.

            Examples:
              sfauth kubeconfig --account work       # the users[].user.exec stanza to paste
              KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}' \\
                sfauth kube-credential --account work
            """
    )

    @Option(help: ArgumentHelp("The account: an alias, username, email or identifier. Default: the default account.", valueName: "account"))
    var account: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let status = await Self.printCredential(account: account, environment: environment)
        if status != .success { throw ExitCode(status.rawValue) }
    }

    private static func printCredential(account: String?, environment: [String: String]) async -> ExitStatus {
        do throws(OAuthError) {
            let request = try ExecCredential.Request(environment: environment)
            if let supplied = SFAuthEnvironment.suppliedToken(environment) {
                print(ExecCredential.render(apiVersion: request.apiVersion, token: supplied.accessToken, expiry: nil))
                return .success
            }
            let (store, source) = try AccountTokens.source(environment: environment)
            let identifier = try AccountTokens.identifier(account, in: store)
            let credentials: OAuthCredentials
            do {
                credentials = try await source.credentials(account: identifier)
            } catch .loginRequired(let message) {
                // A sign-in only with a person there: kubectl's `interactive`, and a terminal.
                guard request.interactive ?? true, InteractiveSignIn.terminalAvailable(),
                      let stored = try AccountTokens.stored(identifier, in: store) else {
                    throw .loginRequired(message)
                }
                credentials = try await InteractiveSignIn(store: store).withSignIn(of: stored) { () async throws(OAuthError) in
                    try await source.credentials(account: stored.identifier)
                }
            }
            print(ExecCredential.render(apiVersion: request.apiVersion, token: credentials.accessToken,
                                        expiry: credentials.expiry(assumedLifetime: source.assumedLifetime)))
            return .success
        } catch {
            return AccountTokens.fail(error)
        }
    }
}
