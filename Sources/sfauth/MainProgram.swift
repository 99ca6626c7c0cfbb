import Glibc

/// The main program, `sfauth-main`, which the front end becomes for every command it does not
/// answer itself.
enum MainProgram {
    /// Where the main program is, relative to this program's own file (symbolic links resolved):
    /// beside it (a build directory), or in `../libexec/sfauth/` (an installed prefix: /usr, /usr/local,
    /// an unpacked tarball).
    static let candidates = ["sfauth-main", "../libexec/sfauth/sfauth-main"]

    /// Replaces this process with the main program, given `arguments` (whose first element becomes
    /// the path of this program, so the main program knows what people call it: it writes that path
    /// into kubeconfig and git configuration). Returns only to exit with a message when it cannot.
    static func run(_ arguments: [String]) -> Never {
        let me = executablePath()
        let directory = me.map(dirname(of:)) ?? "."
        var tried = [String]()
        for candidate in candidates {
            let path = directory + "/" + candidate
            tried.append(path)
            guard access(path, X_OK) == 0 else { continue }
            become(path, arguments: [me ?? arguments.first ?? "sfauth"] + arguments.dropFirst())
            tried[tried.count - 1] += " (\(String(cString: strerror(errno))))"
        }
        let message = "sfauth: Its main program could not be started (looked for \(tried.joined(separator: " and "))); reinstall sfauth.\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(Self.localFault)
    }

    /// The exit status when sfauth itself is broken (see the README's exit codes).
    static let localFault: Int32 = 9

    private static func become(_ path: String, arguments: [String]) {
        let argv = arguments.map { strdup($0) } + [nil]
        execv(path, argv)
        // Only reached when execv failed; the caller reports it.
    }

    /// This program's file, from `/proc/self/exe`.
    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func dirname(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
