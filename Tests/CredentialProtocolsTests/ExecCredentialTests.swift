import CredentialProtocols
import Foundation
import SFAuthModel
import Testing

/// client-go's exec credential plugin protocol.
struct ExecCredentialTests {
    @Test func theRequestIsReadFromKubernetesExecInfo() throws {
        #expect(try ExecCredential.Request(environment: [:]) == ExecCredential.Request())
        #expect(try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": "  "]) == ExecCredential.Request())
        let v1beta1 = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#
        #expect(try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": v1beta1])
            == ExecCredential.Request(apiVersion: "client.authentication.k8s.io/v1beta1", interactive: false))
        #expect(try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": #"{"spec":{"interactive":true}}"#])
            == ExecCredential.Request(interactive: true))
    }

    @Test(arguments: ["{", "[]", #"{"apiVersion":"client.authentication.k8s.io/v2"}"#, #"{"apiVersion":7}"#])
    func aRequestThatIsNotKubectlsIsAConfigurationError(text: String) {
        let error = #expect(throws: OAuthError.self) { try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": text]) }
        #expect(error?.recovery == .fixConfiguration)
    }

    @Test func theCredentialIsOneLineOfSortedJSON() {
        #expect(ExecCredential.render(apiVersion: "client.authentication.k8s.io/v1", token: "a/b\"c", expiry: Date(timeIntervalSince1970: 1_700_000_000))
            == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{},"status":{"expirationTimestamp":"2023-11-14T22:13:20Z","token":"a/b\"c"}}"#)
        #expect(ExecCredential.render(apiVersion: "client.authentication.k8s.io/v1", token: "t", expiry: nil)
            == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{},"status":{"token":"t"}}"#)
    }

    @Test func theKubeconfigStanzaRunsThisProgram() {
        #expect(ExecCredential.kubeconfigExecStanza(command: "/usr/bin/sfauth", arguments: ["kube-credential", "--account", "wo\"rk"], indent: 2) == """
              exec:
                apiVersion: client.authentication.k8s.io/v1
                command: "/usr/bin/sfauth"
                args:
                - "kube-credential"
                - "--account"
                - "wo\\"rk"
                interactiveMode: IfAvailable
                provideClusterInfo: false
            """)
    }
}
