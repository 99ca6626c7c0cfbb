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
        #expect(
            try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": v1beta1])
                == ExecCredential.Request(apiVersion: "client.authentication.k8s.io/v1beta1", interactive: false))
        #expect(
            try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": #"{"spec":{"interactive":true}}"#])
                == ExecCredential.Request(interactive: true))
    }

    @Test(arguments: ["{", "[]", #"{"apiVersion":"client.authentication.k8s.io/v2"}"#, #"{"apiVersion":7}"#])
    func aRequestThatIsNotKubectlsIsAConfigurationError(text: String) {
        let error = #expect(throws: OAuthError.self) { try ExecCredential.Request(environment: ["KUBERNETES_EXEC_INFO": text]) }
        #expect(error?.recovery == .fixConfiguration)
    }

    @Test func theCredentialIsOneLineOfSortedJSON() {
        #expect(
            ExecCredential.render(apiVersion: "client.authentication.k8s.io/v1", token: "a/b\"c", expiry: Date(timeIntervalSince1970: 1_700_000_000))
                == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{},"status":{"expirationTimestamp":"2023-11-14T22:13:20Z","token":"a/b\"c"}}"#
        )
        #expect(
            ExecCredential.render(apiVersion: "client.authentication.k8s.io/v1", token: "t", expiry: nil)
                == #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{},"status":{"token":"t"}}"#)
    }

    @Test func theKubeconfigStanzaRunsThisProgram() {
        #expect(
            ExecCredential.kubeconfigExecStanza(command: "/usr/bin/sfauth", arguments: ["kube-credential", "--account", "wo\"rk"], indent: 2) == """
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

/// The hand-written JSON is `JSONEncoder`'s, byte for byte (kubectl's plugin output is the same from
/// either program, and from any earlier sfauth).
struct ExecCredentialEncodingTests {
    static let samples: [String] = [
        "plain", "", "a/b", "quote\" backslash\\ slash/", "tab\tnew\nline\rreturn", "\u{0}\u{1}\u{8}\u{B}\u{C}\u{1B}\u{1F}",
        "del\u{7F} c1\u{85} nbsp\u{A0}", "bidi\u{202E}\u{2066} ls\u{2028} ps\u{2029}", "é 日本 🔑 e\u{301}",
        String((0..<128).map { Character(Unicode.Scalar(UInt8($0))) }),
    ]

    @Test(arguments: samples)
    func stringsAreEscapedAsJSONEncoderEscapesThem(text: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        #expect(ExecCredential.jsonString(text) == String(decoding: try encoder.encode(text), as: UTF8.self))
    }

    @Test(arguments: samples)
    func theCredentialIsJSONEncodersWithSortedKeys(token: String) throws {
        struct Wire: Encodable {
            var kind = "ExecCredential", apiVersion: String, spec = [String: String](), status: [String: String]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expiry = Date(timeIntervalSince1970: 1_700_000_000)
        for (date, status) in [(expiry, ["token": token, "expirationTimestamp": "2023-11-14T22:13:20Z"]), (nil, ["token": token])] {
            let expected = String(
                decoding: try encoder.encode(Wire(apiVersion: "client.authentication.k8s.io/v1beta1", status: status)), as: UTF8.self)
            #expect(ExecCredential.render(apiVersion: "client.authentication.k8s.io/v1beta1", token: token, expiry: date) == expected)
        }
    }

    @Test func theSetCredentialsCommandQuotesOnlyWhatTheShellWouldRead() {
        let line = ExecCredential.setCredentialsCommand(
            user: "it's me", command: "/usr/bin/sfauth",
            arguments: ["kube-credential", "--account", "idp.example/a b"])
        #expect(
            line == "kubectl config set-credentials 'it'\\''s me' --exec-api-version=client.authentication.k8s.io/v1 "
                + "--exec-command=/usr/bin/sfauth --exec-arg=kube-credential --exec-arg=--account '--exec-arg=idp.example/a b' "
                + "--exec-interactive-mode=IfAvailable")
    }
}
