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
            interactiveMode IfAvailable (a sign-in may use kubectl's terminal). With --name the entry is \
            a complete list item (- name: N); without it only the exec stanza is printed, to paste under \
            an existing user:.

            Examples:
              sfauth kubeconfig --account work --name sfauth-work
              kubectl config set-context --current --user sfauth-work
            """
    )

    @Option(help: ArgumentHelp("The account kube-credential uses. Default: whichever is the default when kubectl runs.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("Print a whole users[] item with this name.", valueName: "name"))
    var name: String?

    func run(in context: CommandContext) {
        let arguments = ["kube-credential"] + (account.map { ["--account", $0] } ?? [])
        if let name {
            print("- name: \(ExecCredential.yamlQuoted(name))")
            print("  user:")
            print(ExecCredential.kubeconfigExecStanza(command: context.executablePath, arguments: arguments, indent: 4))
        } else {
            print(ExecCredential.kubeconfigExecStanza(command: context.executablePath, arguments: arguments))
        }
    }
}
