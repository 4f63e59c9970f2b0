import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem

/// Reads configuration files from the real file system for `ReachdConfiguration.load` and
/// `DispatcherConfiguration.load` (through `ConfigurationFileSource.files(mainFile:mustExist:)`).
public struct FileSystemConfigurationFiles: ConfigurationFileSource {
    public init() {}

    /// `stat(2)` then the whole file; ENOENT (also for a dangling symlink) and ENOTDIR are
    /// "not there".
    public func contents(of path: String) throws(ConfigurationError) -> String? {
        let status: FileStatus?
        do {
            status = try FileSystem.status(of: path, followingLinks: true)
        } catch {
            if error == .notDirectory { return nil }
            throw ConfigurationError(file: path, message: "cannot read: \(error.text)")
        }
        guard let status else { return nil }
        if status.kind == .directory {
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

    /// The directory's entries that are regular files or symlinks to them. ENOENT and ENOTDIR
    /// are an empty list.
    public func fileNames(in directory: String) throws(ConfigurationError) -> [String] {
        let names: [String]
        do {
            names = try FileSystem.entries(of: directory)
        } catch {
            if error == .noSuchFile || error == .notDirectory { return [] }
            throw ConfigurationError(file: directory, message: "cannot list: \(error.text)")
        }
        // Followed: a symlink counts as what it points to, as in systemd's drop-ins.
        return names.filter { (try? FileSystem.status(of: directory + "/" + $0, followingLinks: true))??.kind == .regularFile }
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
