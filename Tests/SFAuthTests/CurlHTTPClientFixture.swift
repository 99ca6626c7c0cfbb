import Foundation

/// Runs `Fixtures/http_fixture.py` (python3, standard library only) for CurlHTTPClient's tests.
///
/// The server binds 127.0.0.1:0 and prints its port; with `tls: true` it serves HTTPS with a
/// self-signed certificate for 127.0.0.1 and prints the certificate's path too. It exits when
/// its stdin closes (`stop()`, or this process ending) or after `lifetime` seconds.
final class CurlHTTPFixture: @unchecked Sendable {
    let port: Int
    /// The self-signed certificate (PEM) when started with `tls: true`.
    let certificatePath: String?
    private let process: Process
    private let stdin: Pipe

    static var scriptPath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/http_fixture.py").path
    }

    init(tls: Bool = false, lifetime: Int = 60) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.scriptPath, "--lifetime", String(lifetime)] + (tls ? ["--tls"] : [])
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        self.stdin = stdin

        let reader = stdout.fileHandleForReading.fileDescriptor
        func readLine() throws -> String {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(reader, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { throw FixtureError.noOutput }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }
        do {
            guard let port = Int(try readLine()) else { throw FixtureError.noOutput }
            self.port = port
            self.certificatePath = tls ? try readLine() : nil
        } catch {
            process.terminate()
            throw error
        }
    }

    enum FixtureError: Error { case noOutput }

    /// `http://127.0.0.1:<port><path>` (or https with `tls: true`).
    func url(_ path: String) -> String {
        "\(certificatePath == nil ? "http" : "https")://127.0.0.1:\(port)\(path)"
    }

    /// Closes the server's stdin, which makes it exit, and waits for it.
    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// Runs `body` with a fresh fixture and stops it afterwards, also when `body` throws.
    static func with<T>(tls: Bool = false, _ body: (CurlHTTPFixture) async throws -> T) async throws -> T {
        let fixture = try CurlHTTPFixture(tls: tls)
        defer { fixture.stop() }
        return try await body(fixture)
    }

    /// A 127.0.0.1 port nothing listens on: bound, read back, closed.
    static func closedPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// What `/echo` saw.
struct CurlHTTPEcho: Decodable {
    let method: String
    let path: String
    let headers: [[String]]
    let body: String

    /// The values of header `name` (case-insensitive), in order.
    func values(_ name: String) -> [String] {
        headers.filter { $0.first?.lowercased() == name.lowercased() }.map { $0.count > 1 ? $0[1] : "" }
    }
}
