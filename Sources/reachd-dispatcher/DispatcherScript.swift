import ReachabilityCore

/// What `lstat(2)`/`stat(2)` say about one entry of a script directory, for the checks below.
public struct ScriptFileFacts: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case regular, directory, other
        /// A symbolic link to `/dev/null`: masks a script of the same name in a later directory.
        case maskLink
        /// A symbolic link whose target does not exist.
        case danglingLink
    }

    /// What the entry is (a symlink is judged by what it points to, except a mask).
    public var kind: Kind
    /// Owner of the file (of the target, for a symlink).
    public var uid: UInt32
    /// `st_mode & 07777`.
    public var mode: UInt32

    public init(kind: Kind, uid: UInt32, mode: UInt32) { self.kind = kind; self.uid = uid; self.mode = mode }
}

/// One script the dispatcher found: its name, the path it runs from, and whether it may run.
public struct DispatcherScript: Equatable, Sendable {
    public enum Verdict: Equatable, Sendable {
        case run
        /// Masked (symlink to /dev/null): silently not run.
        case masked
        /// Not run, for this reason (logged).
        case refused(String)
    }

    public var name: String
    public var path: String
    public var verdict: Verdict

    public init(name: String, path: String, verdict: Verdict) { self.name = name; self.path = path; self.verdict = verdict }

    /// NetworkManager-dispatcher's rule: a regular file, owned by root (or by the user the
    /// dispatcher runs as), executable by its owner, not writable by group or others, without
    /// set-user-ID or set-group-ID. Anyone who could change such a file could run code as root.
    public static func verdict(for facts: ScriptFileFacts, allowedOwner: UInt32) -> Verdict {
        switch facts.kind {
        case .maskLink: return .masked
        case .danglingLink: return .refused("dangling symbolic link")
        case .directory: return .refused("is a directory")
        case .other: return .refused("not a regular file")
        case .regular: break
        }
        if facts.uid != 0 && facts.uid != allowedOwner {
            return .refused("owned by uid \(facts.uid), not by root")
        }
        if facts.mode & 0o022 != 0 {
            return .refused("writable by \(facts.mode & 0o020 != 0 ? "group" : "others") (mode \(octal(facts.mode)))")
        }
        if facts.mode & 0o6000 != 0 {
            return .refused("set-user-ID or set-group-ID (mode \(octal(facts.mode)))")
        }
        if facts.mode & 0o100 == 0 {
            return .refused("not executable (mode \(octal(facts.mode)))")
        }
        return .run
    }

    private static func octal(_ mode: UInt32) -> String {
        let text = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - text.count)) + text
    }

    /// True for names that are never scripts: hidden files, editor backups, package manager
    /// leftovers (`.dpkg-old`, `.dpkg-new`, `.dpkg-dist`, `.dpkg-tmp`, `.ucf-*`).
    public static func isIgnoredName(_ name: String) -> Bool {
        name.isEmpty || name.hasPrefix(".") || name.hasSuffix("~") || name.hasSuffix(".swp")
            || [".dpkg-old", ".dpkg-new", ".dpkg-dist", ".dpkg-tmp", ".dpkg-bak", ".ucf-old", ".ucf-new", ".ucf-dist"]
                .contains { name.hasSuffix($0) }
    }

    /// The scripts of several directories, first directory first, merged by name as systemd
    /// merges its unit directories (an earlier directory's entry replaces a later one's of the
    /// same name), in lexical (byte) order of their names, each with its verdict.
    public static func select(_ listings: [(directory: String, entries: [(name: String, facts: ScriptFileFacts)])],
                              allowedOwner: UInt32) -> [DispatcherScript] {
        var chosen: [String: DispatcherScript] = [:]
        for listing in listings {
            for entry in listing.entries where !isIgnoredName(entry.name) && chosen[entry.name] == nil {
                chosen[entry.name] = DispatcherScript(name: entry.name, path: listing.directory + "/" + entry.name,
                                                      verdict: verdict(for: entry.facts, allowedOwner: allowedOwner))
            }
        }
        return chosen.values.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    /// True when a script that runs for `fields` (empty: every event) runs for `batch`: always
    /// for an `initial` event (the state at start), otherwise when the batch changed one of them.
    public static func wants(_ fields: [String], _ batch: DispatchBatch) -> Bool {
        if fields.isEmpty || batch.event.event == .initial { return true }
        return batch.event.changes.contains { fields.contains($0) }
    }
}
