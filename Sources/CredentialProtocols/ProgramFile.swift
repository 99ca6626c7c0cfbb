import Glibc

/// This program's own file, as the kernel knows it (`/proc/self/exe`, symbolic links resolved):
/// where the front end looks for the main program beside it, and the path the main program writes
/// into kubeconfig and git configuration when it was run directly.
package enum ProgramFile {
    /// The absolute path of the running executable; `nil` when `/proc` cannot say.
    package static func path() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
