import FoundationEssentials
import ReachabilityCore
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// Reads the script directories from the file system for `DispatcherScript.select`.
enum ScriptDirectories {
    /// The scripts of `directories` (first wins by name), each with its verdict. A directory that
    /// anyone but root (or this process's user) could write to is refused as a whole: whoever
    /// can add files there can add a script.
    static func scan(_ directories: [String], log: LogSink) -> [DispatcherScript] {
        let owner = UInt32(geteuid())
        var listings: [(directory: String, entries: [(name: String, facts: ScriptFileFacts)])] = []
        for directory in directories {
            var info = stat()
            guard stat(directory, &info) == 0 else {
                if errno != ENOENT { log.warning("cannot read script directory \(directory): \(String(cString: strerror(errno)))") }
                continue
            }
            let mode = UInt32(info.st_mode) & 0o7777
            if info.st_uid != 0 && info.st_uid != owner {
                log.warning("refusing script directory \(directory): owned by uid \(info.st_uid), not by root")
                continue
            }
            if mode & 0o022 != 0 && mode & 0o1000 == 0 {
                log.warning("refusing script directory \(directory): writable by group or others (mode \(String(mode, radix: 8)))")
                continue
            }
            listings.append((directory, entries(of: directory, log: log)))
        }
        return DispatcherScript.select(listings, allowedOwner: owner)
    }

    private static func entries(of directory: String, log: LogSink) -> [(name: String, facts: ScriptFileFacts)] {
        guard let dir = opendir(directory) else {
            log.warning("cannot list script directory \(directory): \(String(cString: strerror(errno)))")
            return []
        }
        defer { closedir(dir) }
        var result: [(name: String, facts: ScriptFileFacts)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFLNK {
                if linkTarget(path) == "/dev/null" {
                    result.append((name, ScriptFileFacts(kind: .maskLink, uid: 0, mode: 0)))
                    continue
                }
                guard stat(path, &info) == 0 else {
                    result.append((name, ScriptFileFacts(kind: .danglingLink, uid: 0, mode: 0)))
                    continue
                }
            }
            let kind: ScriptFileFacts.Kind
            switch info.st_mode & S_IFMT {
            case S_IFREG: kind = .regular
            case S_IFDIR: kind = .directory
            default: kind = .other
            }
            result.append((name, ScriptFileFacts(kind: kind, uid: info.st_uid, mode: UInt32(info.st_mode) & 0o7777)))
        }
        return result
    }

    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
