import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// Reads configuration files from the real file system for `ReachdConfiguration.load`.
public struct FileSystemConfigurationFiles: ConfigurationFileSource {
    public init() {}

    /// `stat(2)` then the whole file; ENOENT (also for a dangling symlink) is "not there".
    public func contents(of path: String) throws(ConfigurationError) -> String? {
        var info = stat()
        if stat(path, &info) != 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw ConfigurationError(file: path, message: "cannot read: \(Errno(code, call: "stat").text)")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw ConfigurationError(file: path, message: "cannot read: is a directory")
        }
        let data: [UInt8]
        do {
            data = try FileDescriptor.open(path).readToEnd()
        } catch {
            throw ConfigurationError(file: path, message: "cannot read: \(error.text)")
        }
        guard let text = String(data: Data(data), encoding: .utf8) else {
            throw ConfigurationError(file: path, message: "not valid UTF-8")
        }
        return text
    }

    /// `opendir(3)`/`readdir(3)`; regular files and symlinks to them. ENOENT is an empty list.
    public func fileNames(in directory: String) throws(ConfigurationError) -> [String] {
        guard let dir = opendir(directory) else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return [] }
            throw ConfigurationError(file: directory, message: "cannot list: \(Errno(code, call: "opendir").text)")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var info = stat()
            // stat (not lstat): a symlink counts as what it points to, as in systemd's drop-ins.
            guard stat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            names.append(name)
        }
        return names
    }
}

extension ReachdConfiguration {
    /// Reads `mainFile` (default `/etc/reachd/reachd.conf`) and then `<mainFile>.d/*.conf` in
    /// lexical order, later files overriding earlier ones. A missing main file gives the defaults,
    /// unless `mustExist` (use it for an explicit `--config FILE`).
    ///
    /// This is what reachd calls at start-up and on SIGHUP: on error keep the running
    /// configuration and log `error.description` (it names file, line and key).
    ///
    /// - Throws: `ConfigurationError`.
    public static func load(mainFile: String = ReachdConfiguration.defaultPath, mustExist: Bool = false) throws(ConfigurationError) -> ReachdConfiguration {
        try load(mainFile: mainFile, mustExist: mustExist, source: FileSystemConfigurationFiles())
    }
}
