import ArgumentParser
import CredentialProtocols
import SFAuth
import SFAuthCLI

/// `sfauth kubeconfig`: prints the kubeconfig `users[]` entry that makes kubectl get its tokens
/// from `sfauth kube-credential`.
struct KubeconfigCommand: SFAuthSubcommand {
    static let configuration = CommandConfiguration(
        commandName: "kubeconfig",
        abstract: "Print the kubeconfig user entry (exec stanza) that runs sfauth kube-credential.",
        discussion: """
            Prints a users[] entry for ~/.kube/config: its user.exec runs this sfauth binary (by its \
            absolute path) as a client.authentication.k8s.io/v1 exec credential plugin, with \
            interactiveMode IfAvailable (a sign-in may use kubectl's terminal). The account (--account, \
            else the default one now) is written by its identifier, which no alias or later sign-in can \
            take over. With --name the entry is a complete list item (- name: N); with --set-credentials \
            N, the one kubectl config set-credentials command that writes it; with neither, only the exec \
            stanza, to paste under an existing user:.

            Examples:
              sfauth kubeconfig --account work --set-credentials sfauth-work | sh
              kubectl config set-context --current --user sfauth-work
              sfauth kubeconfig --account work --audience prod-cluster --min-valid 5m --name sfauth-prod
            """
    )

    @Option(help: ArgumentHelp("The account kube-credential uses. Default: the default account now.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("Print a whole users[] item with this name.", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Print the kubectl config set-credentials command that writes the user with this name.", valueName: "name"))
    var setCredentials: String?

    @Option(
        help: ArgumentHelp(
            "Have kube-credential give a token for this resource from the account's sign-in (a cluster that checks its own audience).",
            valueName: "url"))
    var resource: String?

    @OptionGroup(title: "Per-call tokens (written into the exec arguments)")
    var targetOptions: TargetOptions

    func validate() throws {
        if name != nil && setCredentials != nil { throw ValidationError("Give --name or --set-credentials, not both.") }
    }

    func run(in context: CommandContext) throws {
        let chosen = try context.accounts().store.accountForConfiguration(named: account)
        var arguments = ["kube-credential", "--account", chosen.identifier]
        if let resource { arguments += ["--resource", resource] }
        arguments += targetOptions.arguments
        if let setCredentials {
            print(ExecCredential.setCredentialsCommand(user: setCredentials, command: context.executablePath, arguments: arguments))
        } else if let name {
            print("- name: \(ExecCredential.yamlQuoted(name))")
            print("  user:")
            print(ExecCredential.kubeconfigExecStanza(command: context.executablePath, arguments: arguments, indent: 4))
        } else {
            print(ExecCredential.kubeconfigExecStanza(command: context.executablePath, arguments: arguments))
        }
    }
}
