import CredentialProtocols
import Glibc
import SFAuth
import SFAuthStore

/// Docker's client configuration file, `config.json`, in `--docker-config DIR`, else
/// `$DOCKER_CONFIG`, else `~/.docker` (docker/cli `config.Dir()`; containers/image reads the same
/// file). Read whole, edited as text (`DockerConfigText`) and replaced atomically, its mode kept
/// (0600 for a new file); a file that is a symbolic link (dotfiles) is changed where it points.
package struct DockerConfigFile: Sendable {
    /// The directory.
    package let directory: String
    /// `<directory>/config.json`.
    package var path: String { directory + "/config.json" }

    /// The file in `directory`.
    package init(directory: String) {
        self.directory = directory
    }

    /// The file Docker reads: in `option` (`--docker-config`), else `DOCKER_CONFIG`, else `~/.docker`.
    ///
    /// - Throws: a usage failure when none of them is set (no `HOME`).
    package init(option: String?, environment: [String: String]) throws(CommandFailure) {
        if let option, !option.isEmpty {
            self.init(directory: option)
        } else if let variable = environment["DOCKER_CONFIG"], !variable.isEmpty {
            self.init(directory: variable)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            self.init(directory: home + "/.docker")
        } else {
            throw CommandFailure(usage: "neither DOCKER_CONFIG nor HOME is set, so Docker's config.json cannot be found; give --docker-config DIR")
        }
    }

    /// What the file holds now.
    package struct Contents: Sendable {
        /// The text (`{}` when there is no file yet).
        package var text: DockerConfigText
        /// The mode to keep; `nil` when there is no file yet.
        package var mode: mode_t?
    }

    /// Reads and checks the file.
    ///
    /// - Throws: a usage failure when it cannot be read or is not a JSON object whose
    ///   `credHelpers` is an object — nothing is changed then.
    package func read() throws(CommandFailure) -> Contents {
        let bytes: [UInt8]?
        do { bytes = try POSIXFile.read(path) } catch {
            throw CommandFailure(usage: "\(error); nothing was changed")
        }
        guard let bytes else { return Contents(text: .empty, mode: nil) }
        var info = stat()
        let mode = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o600
        do {
            return Contents(text: try DockerConfigText(bytes), mode: mode)
        } catch {
            throw CommandFailure(usage: "\(path) cannot be changed: \(error); fix it or move it away (nothing was changed)")
        }
    }

    /// Replaces the file with `text` (atomically, `mode`, else 0600), creating the directory
    /// (0700) first when it is missing.
    package func write(_ text: DockerConfigText, mode: mode_t?) throws(CommandFailure) {
        let target = Self.resolved(path)
        let targetDirectory = target.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let directory = targetDirectory.isEmpty ? (target.hasPrefix("/") ? "/" : ".") : targetDirectory
        do {
            if access(directory, F_OK) != 0 { try StoreDirectory.makeDirectories(Self.absolute(directory)) }
            try POSIXFile.writeAtomically(text.bytes, to: target, directory: directory, mode: mode ?? 0o600)
        } catch {
            throw CommandFailure(usage: "\(path) cannot be written: \(error)")
        }
    }

    /// Where `path` leads when it is a symbolic link (its target, resolved), else `path` itself.
    private static func resolved(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// `path` from the root (`makeDirectories` walks absolute paths).
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return String(cString: cwd) + "/" + path
    }
}
