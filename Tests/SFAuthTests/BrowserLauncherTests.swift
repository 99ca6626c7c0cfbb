import Foundation
import Glibc
import Testing

@testable import SFAuth

// Serialized: these tests start processes and some of them time how long `open` takes. (Scripts are
// written so that a child spawned meanwhile cannot make them fail with ETXTBSY: see
// BrowserTestSandbox.script.)
@Suite("BrowserLauncher", .serialized)
struct BrowserLauncherTests {
    /// An authorization URL with everything a shell would mangle.
    static let url =
        "https://login.example.com/services/oauth2/authorize?response_type=code&client_id=3MVG9%3D%3D"
        + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A1717%2FOauthRedirect&scope=api%20refresh_token"
        + "&state=a%2Bb&code_challenge=x-y_z&code_challenge_method=S256&prompt=login%20consent"

    @Test("xdg-open runs $BROWSER with the exact URL as one argument (no DISPLAY)")
    func xdgOpenUsesBROWSER() throws {
        try requireXdgOpen()
        let sandbox = try BrowserTestSandbox()
        let browser = try sandbox.script("browser", "printf '%s\\0' \"$@\" > '\(sandbox.path("argv"))'")
        let launcher = SystemBrowserLauncher(environment: sandbox.environment(["BROWSER": browser]))
        try launcher.open(Self.url)
        #expect(try sandbox.arguments("argv") == [Self.url])
    }

    @Test("$BROWSER failing: xdg-open exits 3 and the error says so, with its message")
    func xdgOpenFailure() throws {
        try requireXdgOpen()
        let sandbox = try BrowserTestSandbox()
        let browser = try sandbox.script("browser", "echo 'cannot open display' >&2; exit 1")
        let launcher = SystemBrowserLauncher(environment: sandbox.environment(["BROWSER": browser]))
        let error = try #require(throws: BrowserLaunchError.self) { try launcher.open(Self.url) }
        #expect(error.message == "xdg-open exited with status 3 (no method available for opening 'the URL')")  // shown once, by the caller
    }

    @Test("a command that exits 1 throws with the status and its last stderr line")
    func commandFailure() throws {
        let sandbox = try BrowserTestSandbox()
        let browser = try sandbox.script("browser", "echo first >&2; echo '  no usable browser  ' >&2; echo out; exit 1")
        let launcher = SystemBrowserLauncher(command: [browser], environment: sandbox.environment())
        let error = try #require(throws: BrowserLaunchError.self) { try launcher.open(Self.url) }
        #expect(error.message == "\(browser) exited with status 1 (no usable browser)")
    }

    @Test("a command killed by a signal")
    func commandKilled() throws {
        let launcher = SystemBrowserLauncher(command: ["/bin/sh", "-c", "kill -9 $$", "sh"], environment: ["PATH": "/usr/bin:/bin"])
        let error = try #require(throws: BrowserLaunchError.self) { try launcher.open(Self.url) }
        #expect(error.message == "/bin/sh was killed by signal 9")
    }

    @Test("a command that does not exist: a clear 'not found' message")
    func commandNotFound() throws {
        let sandbox = try BrowserTestSandbox()
        for command in [["/nonexistent/sfauth-browser"], ["sfauth-no-such-browser", "--flag"]] {
            let launcher = SystemBrowserLauncher(command: command, environment: sandbox.environment())
            let error = try #require(throws: BrowserLaunchError.self) { try launcher.open(Self.url) }
            #expect(error.message == "the browser command '\(command[0])' was not found; check it, or open the URL yourself")
        }
        let empty = SystemBrowserLauncher(command: [], environment: sandbox.environment())
        #expect(throws: BrowserLaunchError(message: "the browser command is empty")) { try empty.open(Self.url) }
    }

    @Test("xdg-open not installed and no $BROWSER: says to install xdg-utils")
    func xdgOpenMissing() throws {
        let sandbox = try BrowserTestSandbox()
        let launcher = SystemBrowserLauncher(environment: ["PATH": sandbox.path("empty-bin"), "HOME": sandbox.directory])
        #expect(
            throws: BrowserLaunchError(
                message:
                    "xdg-open is not installed (Debian package xdg-utils); name another browser command, or open the URL yourself")
        ) {
            try launcher.open(Self.url)
        }
    }

    @Test("xdg-open not installed: $BROWSER entries are tried in order, %s replaced, else the URL appended")
    func browserFallback() throws {
        let sandbox = try BrowserTestSandbox()
        let browser = try sandbox.script("browser", "printf '%s\\0' \"$@\" > '\(sandbox.path("argv"))'")
        let noXdg = sandbox.path("empty-bin")
        var launcher = SystemBrowserLauncher(environment: [
            "PATH": noXdg, "BROWSER": "sfauth-missing-browser:\(browser) --new-tab=%s --x",
        ])
        try launcher.open(Self.url)
        #expect(try sandbox.arguments("argv") == ["--new-tab=\(Self.url)", "--x"])

        launcher.environment["BROWSER"] = "'\(browser)' --flag"
        try launcher.open(Self.url)
        #expect(try sandbox.arguments("argv") == ["--flag", Self.url])

        launcher.environment["BROWSER"] = "sfauth-missing-browser"
        let error = try #require(throws: BrowserLaunchError.self) { try launcher.open(Self.url) }
        #expect(error.message.hasPrefix("xdg-open is not installed (Debian package xdg-utils) and no command in $BROWSER worked"))
    }

    @Test("command argv: the URL replaces %s wherever it appears in an argument, else is appended; never through a shell")
    func commandSubstitution() throws {
        let sandbox = try BrowserTestSandbox()
        let browser = try sandbox.script("browser", "printf '%s\\0' \"$@\" > '\(sandbox.path("argv"))'")
        let hostile = "https://h/a?x=1&y=$(touch \(sandbox.path("pwned")));'\"`*` $HOME"

        try SystemBrowserLauncher(command: [browser, "--new-window", "%s", "--after"], environment: sandbox.environment())
            .open(hostile)
        #expect(try sandbox.arguments("argv") == ["--new-window", hostile, "--after"])

        try SystemBrowserLauncher(command: [browser, "--app=%s"], environment: sandbox.environment()).open(hostile)
        #expect(try sandbox.arguments("argv") == ["--app=\(hostile)"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("pwned")))

        // The command is looked up in the PATH of the environment given.
        try SystemBrowserLauncher(command: ["browser", "%s"], environment: sandbox.environment(["PATH": sandbox.directory]))
            .open(Self.url)
        #expect(try sandbox.arguments("argv") == [Self.url])
    }

    @Test("a command still running after the wait counts as opened; it runs in its own session")
    func longRunningCommand() async throws {
        let sandbox = try BrowserTestSandbox()
        let pidFile = sandbox.path("pid")
        var launcher = SystemBrowserLauncher(
            command: ["/bin/sh", "-c", "echo $$ > '\(pidFile)'; exec sleep 30", "sh"], environment: sandbox.environment())
        #expect(launcher.startupWait == .seconds(5))
        // The wait is real (a child process and its stderr pipe); a shorter one proves the same.
        launcher.startupWait = .seconds(1)
        let started = Date()
        // open blocks for the whole wait: on a thread of its own, not one of the few threads of
        // Swift's cooperative pool that every other suite running meanwhile needs.
        try await LoopbackTestClient.blocking { [launcher] in try launcher.open(Self.url) }
        let elapsed = Date().timeIntervalSince(started)
        // Waited about the startup wait, not until the 30 s command ended (a loose bound: the machine is shared).
        #expect(elapsed >= 0.9 && elapsed < 25, "open took \(elapsed) s")
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(pid, SIGKILL) }
        #expect(kill(pid, 0) == 0, "the child should still run")
        #expect(getsid(pid) == pid, "the child leads its own session (POSIX_SPAWN_SETSID)")
        #expect(getsid(pid) != getsid(0))
    }

    @Test("the child's stdin and stdout are /dev/null, stderr a pipe, and it inherits no descriptor of ours (listener sockets included)")
    func childDescriptors() throws {
        let listener = try LoopbackListener()
        defer { listener.cancel() }
        let sandbox = try BrowserTestSandbox()
        let pidFile = sandbox.path("pid")
        // The shell starts a grandchild that inherits its descriptors and outlives it (holding the
        // stderr pipe, like a browser would); we look at the grandchild's descriptors from here.
        try SystemBrowserLauncher(
            command: ["/bin/sh", "-c", "sleep 10 & echo $! > '\(pidFile)'", "sh"], environment: sandbox.environment()
        ).open(Self.url)
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(pid, SIGKILL) }
        // Descriptors of its own come and go at first: the forked shell's before the exec (it opens
        // /dev/null for stdin through a temporary one), then sleep's while it starts (libc, locale
        // files). Look once it is sleep and those are gone; one inherited from us would stay.
        var descriptors: [String] = []
        let deadline = Date().addingTimeInterval(5)
        repeat {
            if (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8))?.hasPrefix("sleep\0") == true {
                descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").sorted()
                if descriptors == ["0", "1", "2"] { break }
            }
            usleep(5_000)
        } while Date() < deadline
        #expect(descriptors == ["0", "1", "2"])
        let targets = try descriptors.map { try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        #expect(targets.count == 3 && targets[0] == "/dev/null" && targets[1] == "/dev/null", "\(targets)")
        #expect(targets.last?.hasPrefix("pipe:") == true, "\(targets)")
    }

    @Test("splitCommandLine splits like a shell for simple commands")
    func splitting() throws {
        let cases: [(String, [String])] = [
            ("firefox", ["firefox"]),
            ("  firefox   --new-window\t%s  ", ["firefox", "--new-window", "%s"]),
            (#""/opt/My Browser/browser" --flag"#, ["/opt/My Browser/browser", "--flag"]),
            (#"'a b' c\ d"#, ["a b", "c d"]),
            (#"say "he said \"hi\" \$HOME \n""#, [#"say"#, #"he said "hi" $HOME \n"#]),
            (#"a"b c"d'e f'g"#, ["ab cde fg"]),
            (#"'' """#, ["", ""]),
            ("$HOME ~ *", ["$HOME", "~", "*"]),
            (#"'it\'"#, [#"it\"#]),
            ("", []),
            ("   ", []),
        ]
        for (input, expected) in cases {
            #expect(try splitCommandLine(input) == expected, "\(input)")
        }
        for bad in [#""unterminated"#, "'open", #"trailing\"#] {
            #expect(throws: BrowserLaunchError.self, "\(bad)") { try splitCommandLine(bad) }
        }
    }

    private func requireXdgOpen() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/xdg-open") else {
            Issue.record("/usr/bin/xdg-open is missing: install the Debian package xdg-utils to run this test")
            throw CancellationError()
        }
    }
}

/// A temporary directory with scripts, removed at the end.
final class BrowserTestSandbox {
    let directory: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/sfauth-browser-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        directory = String(cString: made)
        try FileManager.default.createDirectory(atPath: path("empty-bin"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Writes an executable `/bin/sh` script.
    ///
    /// Through `install`, so that this process never has the script open for writing: any test
    /// spawning a child meanwhile (other suites run in parallel) would copy that descriptor into
    /// the child until its exec, and running the script while a copy lives fails with ETXTBSY,
    /// which xdg-open reports as "no method available".
    func script(_ name: String, _ body: String) throws -> String {
        let file = path(name)
        let text = path(name + ".txt")
        try "#!/bin/sh\n\(body)\n".write(toFile: text, atomically: true, encoding: .utf8)
        let install = Process()
        install.executableURL = URL(fileURLWithPath: "/usr/bin/install")
        install.arguments = ["-m", "755", text, file]
        try install.run()
        install.waitUntilExit()
        guard install.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        return file
    }

    /// A minimal environment with no display, so xdg-open takes its generic path.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "HOME": directory, "LANG": "C.UTF-8"].merging(extra) { $1 }
    }

    /// The NUL-separated arguments a script recorded.
    func arguments(_ name: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(name)))
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }
}
