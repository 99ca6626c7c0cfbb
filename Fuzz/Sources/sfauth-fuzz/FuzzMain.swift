// The fuzz targets' entry point, in two builds of the same sources:
//
// - a normal build (`swift build`, as CI does) is a corpus replayer:
//   `sfauth-fuzz replay TARGET FILE|DIR…` runs every input once through the target and exits 0;
//   a trap (force unwrap, overflowing conversion, …) crashes it, so CI catches a regression
//   without a sanitizer build. `sfauth-fuzz list` names the targets.
// - the fuzzing build (`scripts/fuzz`: `-sanitize=fuzzer,address -DSFAUTH_FUZZING`) exports
//   `LLVMFuzzerTestOneInput`, which runs the target named by `SFAUTH_FUZZ_TARGET`; any command
//   line other than `replay`/`list` goes to libFuzzer's driver (`LLVMFuzzerRunDriver`), so every
//   libFuzzer flag works as usual. (SwiftPM links an executable's `main` to this module's entry
//   point, so libFuzzer's own `main` cannot be used; its driver is called from ours instead.)
import FoundationEssentials
import Glibc

/// The target `LLVMFuzzerTestOneInput` runs: `SFAUTH_FUZZ_TARGET`, read once.
let selectedTarget: FuzzTarget = {
    let name = getenv("SFAUTH_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTargets.named(name) else {
        let message = "sfauth-fuzz: set SFAUTH_FUZZ_TARGET to one of: \(FuzzTargets.names.joined(separator: " "))\n"
        writeError(message)
        exit(2)
    }
    return target
}()

/// Writes to standard error (file descriptor 2).
func writeError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        bytes = bytes.dropFirst(written)
    }
}

/// libFuzzer's entry: one input through the selected target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let buffer = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    selectedTarget.run(buffer)
    return 0
}

/// Resolves the target early, so a wrong `SFAUTH_FUZZ_TARGET` stops before fuzzing starts.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?)
    -> Int32
{
    _ = selectedTarget
    return 0
}

#if SFAUTH_FUZZING
    /// libFuzzer's driver (compiler-rt `FuzzerDriver.cpp`), with this program's command line.
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32
#endif

@main
enum FuzzCommand {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "list":
            print(FuzzTargets.names.joined(separator: "\n"))
        case "replay" where arguments.count >= 3:
            guard let target = FuzzTargets.named(arguments[1]) else {
                fail("unknown target '\(arguments[1])'; targets: \(FuzzTargets.names.joined(separator: " "))")
            }
            var count = 0
            for path in arguments.dropFirst(2) {
                for file in inputFiles(at: path) {
                    guard let bytes = readFile(file) else { fail("cannot read \(file)") }
                    if getenv("SFAUTH_FUZZ_VERBOSE") != nil { writeError("\(arguments[1]): \(file)\n") }
                    bytes.withUnsafeBytes { target.run($0) }
                    count += 1
                }
            }
            print("\(arguments[1]): replayed \(count) input\(count == 1 ? "" : "s")")
        default:
            #if SFAUTH_FUZZING
                _ = selectedTarget
                var argc = CommandLine.argc
                var argv = CommandLine.unsafeArgv
                exit(LLVMFuzzerRunDriver(&argc, &argv, { data, size in fuzzTestOneInput(data, size) }))
            #else
                fail("usage: sfauth-fuzz replay TARGET FILE|DIR…   (targets: \(FuzzTargets.names.joined(separator: " ")))\n       sfauth-fuzz list")
            #endif
        }
    }

    static func fail(_ message: String) -> Never {
        writeError("sfauth-fuzz: \(message)\n")
        exit(2)
    }

    /// `path` itself when it is a file, else the regular files directly inside it, sorted.
    static func inputFiles(at path: String) -> [String] {
        var info = stat()
        guard stat(path, &info) == 0 else { fail("no such file or directory: \(path)") }
        guard info.st_mode & S_IFMT == S_IFDIR else { return [path] }
        guard let directory = opendir(path) else { fail("cannot list \(path)") }
        defer { closedir(directory) }
        var files = [String]()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix(".") { continue }
            let full = path.hasSuffix("/") ? path + name : path + "/" + name
            var fileInfo = stat()
            if stat(full, &fileInfo) == 0, fileInfo.st_mode & S_IFMT == S_IFREG { files.append(full) }
        }
        return files.sorted()
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes += chunk[0..<count] }
            if count < chunk.count { break }
        }
        return ferror(file) == 0 ? bytes : nil
    }
}
