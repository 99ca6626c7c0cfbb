import FoundationEssentials
import SFAuthModel

/// client-go's exec credential plugin protocol (Kubernetes `client.authentication.k8s.io`): what
/// kubectl asks in `KUBERNETES_EXEC_INFO`, and the `ExecCredential` a plugin answers with on stdout.
package enum ExecCredential {
    /// The variable kubectl passes the request in: `KUBERNETES_EXEC_INFO`.
    package static let infoVariable = "KUBERNETES_EXEC_INFO"
    /// The API group version answered when kubectl did not say: `client.authentication.k8s.io/v1`.
    package static let defaultAPIVersion = "client.authentication.k8s.io/v1"
    /// The versions this plugin speaks: `v1` and `v1beta1` (same shape for what we send).
    package static let supportedAPIVersions: Set<String> = [defaultAPIVersion, "client.authentication.k8s.io/v1beta1"]

    /// What kubectl asked for: the `apiVersion` to answer in and `spec.interactive`.
    package struct Request: Sendable, Equatable {
        /// The `apiVersion` to answer in. Default: `defaultAPIVersion`.
        package var apiVersion: String
        /// `spec.interactive`: whether the plugin may talk to the user (kubectl's stdin is a terminal).
        /// `nil` when kubectl did not say (the variable is absent).
        package var interactive: Bool?

        /// A request.
        package init(apiVersion: String = ExecCredential.defaultAPIVersion, interactive: Bool? = nil) {
            self.apiVersion = apiVersion
            self.interactive = interactive
        }

        /// Reads `KUBERNETES_EXEC_INFO` from `environment`; an absent or empty variable is the default
        /// request. An `apiVersion` other than v1/v1beta1, or text that is not the JSON object kubectl
        /// sends, is a configuration error.
        package init(environment: [String: String]) throws(OAuthError) {
            guard let text = environment[ExecCredential.infoVariable], !text.allSatisfy(\.isWhitespace) else {
                self.init()
                return
            }
            let decoded: Wire
            do {
                decoded = try JSONDecoder().decode(Wire.self, from: Data(text.utf8))
            } catch {
                throw .configuration("\(ExecCredential.infoVariable) is not the JSON ExecCredential kubectl sends")
            }
            let version = decoded.apiVersion ?? ExecCredential.defaultAPIVersion
            guard ExecCredential.supportedAPIVersions.contains(version) else {
                throw .configuration(
                    "\(ExecCredential.infoVariable) asks for apiVersion \(version); only client.authentication.k8s.io/v1 and v1beta1 are spoken")
            }
            self.init(apiVersion: version, interactive: decoded.spec?.interactive)
        }

        private struct Wire: Decodable {
            var apiVersion: String?
            var spec: Spec?
            struct Spec: Decodable { var interactive: Bool? }
        }
    }

    /// The `ExecCredential` JSON (one line, keys sorted) with `status.token` and, when known,
    /// `status.expirationTimestamp` in RFC 3339 UTC (kubectl reuses the token until then).
    ///
    /// Written by hand rather than by `JSONEncoder`: the same bytes (`sortedKeys`,
    /// `withoutEscapingSlashes`; `ExecCredentialTests` compares the two), without the encoder's
    /// cost at every start of the front end — which kubectl pays on every command.
    package static func render(apiVersion: String, token: String, expiry: Date?) -> String {
        var json = #"{"apiVersion":"# + jsonString(apiVersion) + #","kind":"ExecCredential","spec":{},"status":{"#
        if let expiry { json += #""expirationTimestamp":"# + jsonString(expiry.rfc3339) + "," }
        return json + #""token":"# + jsonString(token) + "}}"
    }

    /// `text` as a JSON string, escaped as `JSONEncoder` escapes it with `withoutEscapingSlashes`:
    /// `"` and `\`, the short forms `\b \f \n \r \t`, every other control character below U+0020 as
    /// `\u00xx`; everything else as it is.
    package static func jsonString(_ text: String) -> String {
        let hex = Array("0123456789abcdef".unicodeScalars)
        var out = String.UnicodeScalarView()
        out.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append(contentsOf: #"\""#.unicodeScalars)
            case "\\": out.append(contentsOf: #"\\"#.unicodeScalars)
            case "\u{8}": out.append(contentsOf: #"\b"#.unicodeScalars)
            case "\u{C}": out.append(contentsOf: #"\f"#.unicodeScalars)
            case "\n": out.append(contentsOf: #"\n"#.unicodeScalars)
            case "\r": out.append(contentsOf: #"\r"#.unicodeScalars)
            case "\t": out.append(contentsOf: #"\t"#.unicodeScalars)
            case _ where scalar.value < 0x20:
                out.append(contentsOf: #"\u00"#.unicodeScalars)
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 0xF)])
            default:
                out.append(scalar)
            }
        }
        out.append("\"")
        return String(out)
    }

    /// The `users[].user.exec` stanza of a kubeconfig that runs `command args…` as this plugin
    /// (`interactiveMode: IfAvailable`, so a sign-in may use kubectl's terminal), as YAML indented by
    /// `indent` spaces. Every string is double-quoted (JSON strings are YAML strings).
    package static func kubeconfigExecStanza(command: String, arguments: [String], indent: Int = 0) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines = [
            "exec:",
            "  apiVersion: \(defaultAPIVersion)",
            "  command: \(yamlQuoted(command))",
            "  args:",
        ]
        lines += arguments.map { "  - \(yamlQuoted($0))" }
        lines += ["  interactiveMode: IfAvailable", "  provideClusterInfo: false"]
        return lines.map { pad + $0 }.joined(separator: "\n")
    }

    /// The `kubectl config set-credentials` command line that writes the same user as
    /// `kubeconfigExecStanza` under `user`, each word quoted for `sh` where it needs to be.
    package static func setCredentialsCommand(user: String, command: String, arguments: [String]) -> String {
        let words =
            ["kubectl", "config", "set-credentials", user, "--exec-api-version=\(defaultAPIVersion)", "--exec-command=\(command)"]
            + arguments.map { "--exec-arg=\($0)" } + ["--exec-interactive-mode=IfAvailable"]
        return words.map(shellWord).joined(separator: " ")
    }

    /// `word` as `sh` reads it back: as it is when made of characters no shell treats specially,
    /// else single-quoted (`'` written as `'\\''`).
    package static func shellWord(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "-_./:=@%+,".unicodeScalars.contains($0))
            }
        return plain ? word : GitCredential.shellQuoted(word)
    }

    /// A double-quoted YAML scalar (JSON escaping, which YAML reads the same way).
    package static func yamlQuoted(_ text: String) -> String {
        jsonString(text)
    }
}
