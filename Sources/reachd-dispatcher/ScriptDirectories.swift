import ReachabilityCore
import ReachabilitySystem

/// Reads the script directories from the file system for `DispatcherScript.select`.
enum ScriptDirectories {
    /// The scripts of `directories` (first wins by name), each with its verdict. A directory that
    /// anyone but root (or this process's user) could write to is refused as a whole: whoever
    /// can add files there can add a script.
    static func scan(_ directories: [String], log: LogSink) -> [DispatcherScript] {
        let owner = ProcessSetup.effectiveUserID
        var listings: [(directory: String, entries: [(name: String, facts: ScriptFileFacts)])] = []
        for directory in directories {
            let status: FileStatus
            do {
                guard let found = try FileSystem.status(of: directory, followingLinks: true) else { continue }
                status = found
            } catch {
                log.warning("cannot read script directory \(directory): \(error.text)")
                continue
            }
            let mode = status.permissions
            if status.ownerID != 0 && status.ownerID != owner {
                log.warning("refusing script directory \(directory): owned by uid \(status.ownerID), not by root")
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
        let names: [String]
        do {
            names = try FileSystem.entries(of: directory)
        } catch {
            log.warning("cannot list script directory \(directory): \(error.text)")
            return []
        }
        return names.compactMap { name in facts(directory + "/" + name).map { (name, $0) } }
    }

    /// What the checks need of one entry; nil when it vanished meanwhile.
    private static func facts(_ path: String) -> ScriptFileFacts? {
        guard var status = (try? FileSystem.status(of: path)) ?? nil else { return nil }
        if status.kind == .symbolicLink {
            if (try? FileSystem.linkTarget(of: path)) == "/dev/null" {
                return ScriptFileFacts(kind: .maskLink, uid: 0, mode: 0)
            }
            guard let target = (try? FileSystem.status(of: path, followingLinks: true)) ?? nil else {
                return ScriptFileFacts(kind: .danglingLink, uid: 0, mode: 0)
            }
            status = target
        }
        let kind: ScriptFileFacts.Kind
        switch status.kind {
        case .regularFile: kind = .regular
        case .directory: kind = .directory
        case .symbolicLink, .socket, .other: kind = .other
        }
        return ScriptFileFacts(kind: kind, uid: status.ownerID, mode: status.permissions)
    }
}
