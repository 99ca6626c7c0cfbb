import SFAuth
import Testing

@testable import SFAuthCLI

/// The user's configuration file: profiles, `default_profile`, and what is wrong with a bad one.
@Suite struct ConfigurationFileTests {
    let path = "/home/me/.config/sfauth/config.toml"

    func error(_ text: String) -> String? {
        do {
            _ = try ConfigurationFile.parse(text, path: "c.toml")
            return nil
        } catch {
            guard case .configuration(let message) = error else { return "unexpected \(error)" }
            return message.text
        }
    }

    @Test func profilesWithTheirValuesAndLines() throws {
        let file = try ConfigurationFile.parse(
            """
            default_profile = "work"

            [profile.work]
            instance_url = "https://acme.my.salesforce.com"
            scopes = "api  refresh_token"
            callback_port = 8080

            [profile.work.params]
            prompt = "consent"

            [profile.idp.params]
            kc_idp_hint = "github"
            """, path: path)
        #expect(file.defaultProfile == Sourced("work", from: .file(path: path, line: 1, table: "")))
        #expect(file.profileNames == ["work", "idp"])
        let work = try file.profile(Sourced("work", from: .flag("--profile")))
        #expect(work[.instanceURL] == Sourced(.text("https://acme.my.salesforce.com"), from: .file(path: path, line: 4, table: "profile.work")))
        #expect(work[.scopes]?.value == .words(["api", "refresh_token"]))
        #expect(work[.callbackPort]?.value == .port(8080))
        #expect(
            work.parameters == [
                Sourced(
                    AuthorizationParameter(name: "prompt", value: "consent"),
                    from: .file(path: path, line: 9, table: "profile.work.params"))
            ])
        let idp = try file.profile(Sourced("idp", from: .builtIn))
        #expect(idp.values.isEmpty && idp.parameters.map(\.value.name) == ["kc_idp_hint"])
    }

    @Test func sourcesDescribeThemselves() {
        #expect("\(ConfigurationSource.file(path: path, line: 12, table: "profile.work"))" == "\(path):12 [profile.work]")
        #expect("\(ConfigurationSource.file(path: path, line: 1, table: ""))" == "\(path):1")
        #expect("\(ConfigurationSource.flag("--client-id"))" == "flag --client-id")
        #expect("\(ConfigurationSource.environment("SFAUTH_CLIENT_ID"))" == "env SFAUTH_CLIENT_ID")
        #expect("\(ConfigurationSource.preset("salesforce"))" == "preset salesforce")
        #expect("\(ConfigurationSource.builtIn)" == "default")
    }

    @Test func anUnknownProfileListsTheKnownOnes() throws {
        let file = try ConfigurationFile.parse("[profile.a]\n[profile.b]\n", path: "c.toml")
        #expect(throws: OAuthError.configuration("env SFAUTH_PROFILE: no profile 'x' in c.toml; known profiles: a, b")) {
            try file.profile(Sourced("x", from: .environment("SFAUTH_PROFILE")))
        }
        let empty = try ConfigurationFile.parse("", path: "c.toml")
        #expect(throws: OAuthError.configuration("flag --profile: no profile 'x' in c.toml; it defines no profiles")) {
            try empty.profile(Sourced("x", from: .flag("--profile")))
        }
    }

    @Test(arguments: [
        (
            "[profile.work]\nclientid = \"x\"",
            "c.toml:2: unknown key 'clientid' in [profile.work]; did you mean 'client_id'? known keys: \(ConfigurationKey.allNames)"
        ),
        (
            "[profile.work]\nfavourite_colour = \"x\"",
            "c.toml:2: unknown key 'favourite_colour' in [profile.work]; known keys: \(ConfigurationKey.allNames)"
        ),
        (
            "client_id = \"x\"",
            "c.toml:1: unknown key 'client_id' at the top level; known keys: default_profile (profile settings go in a [profile.NAME] table)"
        ),
        ("[profile.w]\nclient_id = 42", "c.toml:2: client_id must be a string, not an integer"),
        ("[profile.w]\nissuer = \"\"", "c.toml:2: issuer is empty"),
        ("[profile.w]\ncallback_port = \"1717\"", "c.toml:2: callback_port must be a port number (an integer without quotes), not a string"),
        ("[profile.w]\ncallback_port = 70000", "c.toml:2: callback_port must be a port number from 0 to 65535, not 70000"),
        ("[profile.w]\ncallback_port = -1", "c.toml:2: callback_port must be a port number from 0 to 65535, not -1"),
        ("[profile.w]\nscopes = true", "c.toml:2: scopes must be an array of strings or a space-separated string, not a boolean"),
        ("[profile.w]\nscopes = [\"api web\"]", "c.toml:2: scopes: 'api web' is not one scope; give each scope as its own string"),
        ("[profile.w.params]\nmax_age = 0", "c.toml:2: the parameter 'max_age' in [profile.w.params] must be a string, not an integer"),
        ("[profile.w.params]\n\"\" = \"x\"", "c.toml:2: a parameter in [profile.w.params] has an empty name"),
        ("default_profile = \"home\"\n[profile.work]", "c.toml:1: default_profile 'home' names no profile; known profiles: work"),
        ("default_profile = 1", "c.toml:1: default_profile must be the name of a profile, as a string"),
        ("[profiles.work]", "c.toml:1: unknown table [profiles.work]; known tables: [profile.NAME] and [profile.NAME.params]"),
        ("[profile.w.extra]", "c.toml:1: unknown table [profile.w.extra]; known tables: [profile.NAME] and [profile.NAME.params]"),
        ("[profile]\nclient_id = \"x\"", "c.toml:2: [profile] holds no keys; put 'client_id' in a [profile.NAME] table"),
        ("[profile.\"\"]", "c.toml:1: a profile name cannot be empty"),
        ("[profile.w]\nclient_id = \"x\"\n[profile.w]", "c.toml:3: duplicate table [profile.w] (first defined on line 1)"),
    ])
    func refusesWithFileLineAndReason(text: String, message: String) {
        #expect(error(text) == message)
    }
}

@Suite struct BrowserSettingTests {
    @Test func theBrowserIsAnArgumentListKeptAsItIs() throws {
        let file = try ConfigurationFile.parse(
            """
            [profile.work]
            issuer = "https://idp.example"
            client_id = "c"
            browser = ["/opt/Google Chrome/chrome", "--profile-directory=Work"]
            """, path: "c.toml")
        let layer = try file.profile(Sourced("work", from: .flag("--profile")))
        let resolved = try ConfigurationResolver(layers: [layer]).resolve()
        #expect(resolved.browser?.value == ["/opt/Google Chrome/chrome", "--profile-directory=Work"])
        for bad in ["browser = \"chrome\"", "browser = []", "browser = [\"\"]"] {
            #expect(throws: OAuthError.self, "\(bad)") {
                let file = try ConfigurationFile.parse("[profile.p]\n\(bad)", path: "c.toml")
                _ = try file.profile(Sourced("p", from: .flag("--profile")))
            }
        }
    }
}

@Suite struct NestedArrayTests {
    @Test func nestedArraysAreRefusedWithoutRecursing() {
        // Thousands of '[' once overflowed the stack (found by fuzzing: Fuzz/corpus/config/regress-deep-arrays).
        let deep = "[profile.a]\nscopes = " + String(repeating: "[", count: 100_000)
        #expect(throws: OAuthError.configuration("c.toml:2: arrays may hold only strings")) {
            try ConfigurationFile.parse(deep, path: "c.toml")
        }
    }
}
