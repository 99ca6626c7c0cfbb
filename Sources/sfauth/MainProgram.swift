import CredentialProtocols
import Glibc
import SFAuthModel

/// The main program, `sfauth-main`, which the front end becomes for every command it does not
/// answer itself.
enum MainProgram {
    /// Where the main program is, relative to this program's own file (symbolic links resolved):
    /// beside it (a build directory), or in `../libexec/sfauth/` (an installed prefix: /usr, /usr/local,
    /// an unpacked tarball).
    static let candidates = ["sfauth-main", "../libexec/sfauth/sfauth-main"]

    /// Replaces this process with the main program, given `arguments` (whose first element becomes
    /// the path of this program, so the main program knows what people call it: it writes that path
    /// into kubeconfig and git configuration). `standardInput`, when given, is what the front end
    /// read from its standard input before handing over: the main program reads it there again.
    /// Returns only to exit with a message when it cannot.
    static func run(_ arguments: [String], standardInput: [UInt8]? = nil) -> Never {
        if let standardInput { feed(standardInput) }
        let me = ProgramFile.path()
        let directory = me.map(dirname(of:)) ?? "."
        var tried = [String]()
        for candidate in candidates {
            let path = directory + "/" + candidate
            tried.append(path)
            guard access(path, X_OK) == 0 else { continue }
            let argv = ([me ?? arguments.first ?? "sfauth"] + arguments.dropFirst()).map { strdup($0) } + [nil]
            execv(path, argv)
            // Only reached when execv failed.
            tried[tried.count - 1] += " (\(String(cString: strerror(errno))))"
        }
        let message = "sfauth: Its main program could not be started (looked for \(tried.joined(separator: " and "))); reinstall sfauth.\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(ExitStatus.localFault.rawValue)
    }

    /// Makes standard input a pipe holding `bytes` and then its end: what was read is there to be
    /// read again. (Only short requests come here — a server URL — which a pipe's buffer holds
    /// whole; anything longer is left as it is.)
    private static func feed(_ bytes: [UInt8]) {
        var ends: [Int32] = [0, 0]
        guard bytes.count <= 4096, pipe(&ends) == 0 else { return }
        _ = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        dup2(ends[0], 0)
        close(ends[0])
    }

    private static func dirname(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
