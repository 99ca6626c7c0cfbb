import FoundationEssentials
import Glibc
import SFAuth

/// One fuzz target: runs one input through a parser of outside data and everything that consumes
/// what it returns. It must not crash on any input; a crash is a bug in sfauth.
struct FuzzTarget: Sendable {
    var name: String
    var run: @Sendable (UnsafeRawBufferPointer) -> Void
}

/// Every target, by name (`Fuzz/corpus/<name>/` holds its seeds, `Fuzz/dict/<name>.dict` its dictionary).
enum FuzzTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "loopback-head", run: fuzzLoopbackHead),
        FuzzTarget(name: "callback", run: fuzzCallback),
        FuzzTarget(name: "token-response", run: fuzzTokenResponse),
        FuzzTarget(name: "id-token", run: fuzzIDToken),
        FuzzTarget(name: "discovery", run: fuzzDiscovery),
        FuzzTarget(name: "device", run: fuzzDevice),
        FuzzTarget(name: "error-body", run: fuzzErrorBody),
        FuzzTarget(name: "config", run: fuzzConfig),
        FuzzTarget(name: "credential-record", run: fuzzCredentialRecord),
        FuzzTarget(name: "protected-resource", run: fuzzProtectedResource),
        FuzzTarget(name: "proxy-head", run: fuzzProxyHead),
        FuzzTarget(name: "docker-config", run: fuzzDockerConfig),
    ]

    static var names: [String] { all.map(\.name) }

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// How the targets read their input: plain text, sections, and HTTP responses written like this
/// (so seeds stay readable and the fuzzer mutates status, headers and body alike):
///
/// ```
/// 400
/// content-type: application/json
///
/// {"error":"invalid_grant"}
/// ```
///
/// A first line that is not a status number makes the whole input the body of a `200` without headers.
enum FuzzInput {
    /// The separator of an input's sections: a line `---`.
    static let separator: [UInt8] = Array("\n---\n".utf8)

    static func text(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// The input split at `\n---\n` into at most `limit` sections (the last keeps any further separators).
    static func sections(_ data: UnsafeRawBufferPointer, limit: Int) -> [ArraySlice<UInt8>] {
        let bytes = Array(data)
        var sections = [ArraySlice<UInt8>]()
        var start = 0
        var index = 0
        while index + separator.count <= bytes.count, sections.count < limit - 1 {
            if bytes[index] == separator[0], bytes[index..<(index + separator.count)].elementsEqual(separator) {
                sections.append(bytes[start..<index])
                index += separator.count
                start = index
            } else {
                index += 1
            }
        }
        sections.append(bytes[start...])
        return sections
    }

    /// An HTTP response in the format above.
    static func response(_ bytes: ArraySlice<UInt8>) -> HTTPResponse {
        guard let firstEnd = bytes.firstIndex(of: 10),
            let status = Int(trimmed(text(bytes[bytes.startIndex..<firstEnd])))
        else {
            return HTTPResponse(status: 200, body: Array(bytes))
        }
        var headers = [String: String]()
        var index = firstEnd + 1
        while index < bytes.endIndex {
            let lineEnd = bytes[index...].firstIndex(of: 10) ?? bytes.endIndex
            var line = bytes[index..<lineEnd]
            if line.last == 13 { line = line.dropLast() }
            index = min(lineEnd + 1, bytes.endIndex)
            if line.isEmpty { break }
            let lineText = text(line)
            guard let colon = lineText.firstIndex(of: ":") else { continue }
            headers[lineText[..<colon].lowercased()] = trimmed(lineText[lineText.index(after: colon)...])
        }
        return HTTPResponse(status: status, headers: headers, body: Array(bytes[index...]))
    }

    static func trimmed(_ text: some StringProtocol) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }

    static func response(_ data: UnsafeRawBufferPointer) -> HTTPResponse { response(Array(data)[...]) }
}

/// What the code does with an error it got: the CLI prints its description and acts on its
/// recovery, so both must be computable for every error a parser throws.
func consume(_ error: OAuthError) {
    _ = error.description
    _ = error.recovery
}

/// Whether `// KNOWN-BUG:` guards (skipping the inputs of a bug reported but not fixed yet) are on;
/// `SFAUTH_FUZZ_NO_GUARDS=1` runs those inputs anyway, to check a fix before its guard goes. None
/// is in place now: every crash fuzzing found is fixed, and its input replays in CI.
let knownBugGuards = getenv("SFAUTH_FUZZ_NO_GUARDS") == nil

/// A fixed "now" (2026-05-04T10:00:00Z), so every run of an input does the same thing.
let fuzzNow = Date(timeIntervalSince1970: 1_777_888_800)
