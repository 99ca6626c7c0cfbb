import Foundation
import Glibc
import SFAuth
import Testing

/// When the keyring tests run.
///
/// - `SFAUTH_TEST_KEYRING=1` (set by `scripts/with-keyring`, which `scripts/test` runs the suite
///   under): a real gnome-keyring is on the session bus, unlocked; the keyring tests run and must pass.
/// - `SFAUTH_REQUIRE_KEYRING=1` without it: the keyring tests run and fail at once, saying to run
///   them under `scripts/with-keyring` (so CI cannot silently skip them).
/// - Neither (a developer's plain `swift test`): the keyring tests are disabled; the tests that
///   need no keyring (no session bus, libsecret missing) still run.
enum KeyringTestEnvironment {
    static var available: Bool { ProcessInfo.processInfo.environment["SFAUTH_TEST_KEYRING"] == "1" }
    static var required: Bool { ProcessInfo.processInfo.environment["SFAUTH_REQUIRE_KEYRING"] == "1" }
    static var shouldRun: Bool { available || required }

    /// Throws a clear failure when the keyring is required but not there.
    static func check() throws {
        try #require(
            available,
            "SFAUTH_REQUIRE_KEYRING=1 but no test keyring (SFAUTH_TEST_KEYRING is not 1): run the tests under scripts/with-keyring, e.g. scripts/with-keyring swift test --filter SecretService"
        )
    }

    /// The repository's root, from this file's path.
    static var repositoryRoot: String {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
        return path
    }

    static var password: String {
        ProcessInfo.processInfo.environment["SFAUTH_TEST_KEYRING_PASSWORD"] ?? "sfauth-test-keyring"
    }
}

struct KeyringTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a program to completion and returns its status and standard output.
@discardableResult
func runTool(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// gnome-keyring's login collection over D-Bus, and its control socket for unlocking it with the
/// password (the way PAM does at login), since unlocking over D-Bus would need a prompt.
enum LoginCollection {
    static let path = "/org/freedesktop/secrets/collection/login"

    static func busEnvironment(_ address: String?) -> [String: String] {
        address.map { ["DBUS_SESSION_BUS_ADDRESS": $0] } ?? [:]
    }

    /// Locks the login collection (org.freedesktop.Secret.Service.Lock: no prompt needed).
    static func lock(busAddress: String? = nil) throws {
        let result = try runTool(
            [
                "dbus-send", "--session", "--print-reply", "--reply-timeout=5000", "--dest=org.freedesktop.secrets",
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock", "array:objpath:\(path)",
            ],
            environment: busEnvironment(busAddress))
        guard result.status == 0 else { throw KeyringTestError("dbus-send Lock failed: \(result.output)") }
    }

    /// The collection's Locked property.
    static func isLocked(busAddress: String? = nil) throws -> Bool {
        let result = try runTool(
            [
                "dbus-send", "--session", "--print-reply=literal", "--reply-timeout=5000", "--dest=org.freedesktop.secrets",
                path, "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.Secret.Collection", "string:Locked",
            ],
            environment: busEnvironment(busAddress))
        guard result.status == 0 else { throw KeyringTestError("reading Locked failed: \(result.output)") }
        if result.output.contains("true") { return true }
        if result.output.contains("false") { return false }
        throw KeyringTestError("unexpected Locked reply: \(result.output)")
    }

    /// The process id of whatever owns `name` on the bus (org.freedesktop.DBus: the bus daemon).
    static func processID(of name: String, busAddress: String? = nil) throws -> pid_t {
        let result = try runTool(
            [
                "dbus-send", "--session", "--print-reply=literal", "--reply-timeout=5000", "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:\(name)",
            ],
            environment: busEnvironment(busAddress))
        guard result.status == 0,
            let pid = result.output.split(separator: " ").last.flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        else {
            throw KeyringTestError("GetConnectionUnixProcessID failed: \(result.output)")
        }
        return pid
    }

    /// Unlocks the login collection through gnome-keyring-daemon's control socket
    /// (`$GNOME_KEYRING_CONTROL/control`): a NUL credentials byte, then a big-endian packet
    /// [length][op 1 = unlock][password length][password]; the answer is [length][result 0 = ok].
    static func unlock(controlDirectory: String, password: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw KeyringTestError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = Array((controlDirectory + "/control").utf8)
        guard socketPath.count < MemoryLayout.size(ofValue: address.sun_path) else { throw KeyringTestError("control path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: socketPath)
            raw[socketPath.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw KeyringTestError("connect to \(controlDirectory)/control: errno \(errno)") }
        func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        let secret = Array(password.utf8)
        let body = bigEndian(1) + bigEndian(UInt32(secret.count)) + secret
        let packet: [UInt8] = [0] + bigEndian(UInt32(body.count + 4)) + body
        guard packet.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == packet.count else {
            throw KeyringTestError("write to the control socket failed")
        }
        var reply = [UInt8](repeating: 0, count: 8)
        var received = 0
        while received < reply.count {
            let count = reply.withUnsafeMutableBytes { read(fd, $0.baseAddress! + received, $0.count - received) }
            guard count > 0 else { throw KeyringTestError("the control socket closed after \(received) bytes") }
            received += count
        }
        guard reply[4..<8].allSatisfy({ $0 == 0 }) else {
            throw KeyringTestError("gnome-keyring refused to unlock the login collection (result \(reply[7]))")
        }
    }
}

/// A D-Bus session bus of its own (dbus-daemon with a private configuration), for the cases where
/// no usable Secret Service is on the bus. Stopped (the daemon killed) by `stop()`.
final class PrivateBus: @unchecked Sendable {
    let directory: String
    let address: String
    let process: Process

    /// - Parameter activatesNeverAnsweringSecretService: when set, the bus "activates"
    ///   org.freedesktop.secrets by running a process that never claims the name: a daemon that
    ///   never answers. Its pid is written to `<directory>/activated.pid`.
    init(activatesNeverAnsweringSecretService: Bool = false) throws {
        let template = FileManager.default.temporaryDirectory.path + "/sfauth-bus-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw KeyringTestError("mkdtemp failed") }
        directory = String(cString: made)
        var serviceDirectory = ""
        if activatesNeverAnsweringSecretService {
            let services = directory + "/services"
            try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
            // Exec is not run by a shell; sh records its pid, then becomes a sleep that never
            // registers the name, so callers wait until they give up.
            try """
            [D-BUS Service]
            Name=org.freedesktop.secrets
            Exec=/bin/sh -c 'echo $$ > \(directory)/activated.pid; exec sleep 60'

            """.write(toFile: services + "/org.freedesktop.secrets.service", atomically: true, encoding: .utf8)
            serviceDirectory = "<servicedir>\(services)</servicedir>"
        }
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory)</listen>
              <auth>EXTERNAL</auth>
              \(serviceDirectory)
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
              <limit name="service_start_timeout">30000</limit>
            </busconfig>
            """
        try configuration.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["dbus-daemon", "--nofork", "--print-address=1", "--config-file=\(directory)/bus.conf"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let lines = readLines(1, from: output.fileHandleForReading)
        guard let first = lines.first, first.hasPrefix("unix:") else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw KeyringTestError("dbus-daemon did not start (output: \(lines))")
        }
        address = first
    }

    func stop() {
        if let text = try? String(contentsOfFile: directory + "/activated.pid", encoding: .utf8),
            let activated = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            kill(activated, SIGKILL)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Reads `count` lines from `handle` without waiting for end of file (the writer stays alive).
func readLines(_ count: Int, from handle: FileHandle) -> [String] {
    var text = ""
    while text.filter({ $0 == "\n" }).count < count {
        let chunk = handle.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    return text.split(separator: "\n").map(String.init)
}

/// A gnome-keyring of its own: `scripts/with-keyring` running a shell that prints the bus address
/// and control directory and then waits for its standard input to close. Isolated from the keyring
/// the rest of the suite uses, so a test may lock it.
final class PrivateKeyring: @unchecked Sendable {
    let process: Process
    let input: Pipe
    let busAddress: String
    let controlDirectory: String
    let errorLog: String
    let password = "private-keyring-password"

    init() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: KeyringTestEnvironment.repositoryRoot + "/scripts/with-keyring")
        process.arguments = ["sh", "-c", #"printf '%s\n%s\n' "$DBUS_SESSION_BUS_ADDRESS" "$GNOME_KEYRING_CONTROL"; exec cat >/dev/null"#]
        var environment = ProcessInfo.processInfo.environment
        environment["SFAUTH_KEYRING_PASSWORD"] = password
        process.environment = environment
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        // Its stderr goes to a file, shown only when it fails to start (a test that kills the bus
        // would otherwise leave bash's "Killed" job report in the test log).
        errorLog = FileManager.default.temporaryDirectory.path + "/sfauth-private-keyring-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errorLog)
        try process.run()
        let lines = readLines(2, from: output.fileHandleForReading)
        guard lines.count >= 2 else {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: errorLog)
            throw KeyringTestError("scripts/with-keyring did not start a keyring (exit \(process.terminationStatus)): \(log)")
        }
        busAddress = lines[0]
        controlDirectory = lines[1]
    }

    /// Closes the shell's input: with-keyring then stops the daemon and the bus.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: errorLog)
    }
}

/// Monotonic milliseconds.
func monotonicMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
}

/// The message of an `OAuthError.storage`, or a description of whatever else it was.
func storageMessage(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as OAuthError {
        if case .storage(let message) = error { return message.text }
        return "not a storage error: \(error)"
    } catch {
        return "not an OAuthError: \(error)"
    }
}
