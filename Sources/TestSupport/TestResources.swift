import Foundation
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// What tests leave on the machine while they run, and the sweep that removes what a dead test
/// process left.
///
/// Everything a test process makes outside itself carries `rch<pid>-` at the start of its name:
/// network namespaces (`rch<pid>-<n><tag>`), their `/etc/netns/` directories, and its
/// temporary directories and files (`/tmp/rch<pid>-…`, which the sockets, buses and servers of
/// its daemons live in). A run that crashed or was killed leaves them, and daemons in them;
/// the next test process's first namespace or temporary directory sweeps them up (`sweepOnce`):
/// whatever carries the pid of a process that no longer exists (`kill(pid, 0)` fails with
/// `ESRCH`). A live pid's, or a name of any other form, is never touched.
public enum TestResources {
    /// `rch<pid>-`, this process's mark at the start of what it makes.
    public static let prefix = "rch\(getpid())-"

    /// What a sweep removed.
    public struct Sweep: Sendable, CustomStringConvertible {
        /// Namespaces deleted.
        public var namespaces: [String] = []
        /// Processes killed (SIGKILL): in a dead process's namespace, or naming its files.
        public var processes: [pid_t] = []
        /// Files and directories removed.
        public var paths: [String] = []

        public var isEmpty: Bool { namespaces.isEmpty && processes.isEmpty && paths.isEmpty }
        public var description: String {
            "\(namespaces.count) namespace(s) \(namespaces), \(processes.count) process(es), \(paths.count) path(s) \(paths)"
        }
    }

    /// Sweeps once per test process, before its first namespace or temporary directory.
    public static func sweepOnce() { _ = firstSweep }

    private static let firstSweep: Sweep = {
        let swept = sweep()
        if !swept.isEmpty { print("TestResources: swept what dead test processes left: \(swept)") }
        return swept
    }()

    /// The pid in a name of ours (`rch<pid>-…`); nil for a name of another form.
    public static func owner(of name: some StringProtocol) -> pid_t? {
        guard name.hasPrefix("rch") else { return nil }
        let rest = name.dropFirst(3)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 9, rest.dropFirst(digits.count).first == "-" else { return nil }
        return pid_t(digits)
    }

    /// True unless no process has `pid` (`kill(pid, 0)`: `EPERM` means someone else's, alive).
    public static func isAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// Removes what processes that are gone left: kills the processes in their namespaces and
    /// those naming their files (SIGKILL), then deletes the namespaces (`ip netns delete`, which
    /// unmounts them) and removes the files (in /tmp, and in `$TMPDIR` when that is another).
    /// Without root, only what this user may remove.
    @discardableResult
    public static func sweep() -> Sweep {
        let directories = temporaryDirectories
        var swept = Sweep()
        var dead: [pid_t: Bool] = [:]
        func isDead(_ pid: pid_t) -> Bool {
            if let known = dead[pid] { return known }
            let answer = pid != getpid() && !isAlive(pid)
            dead[pid] = answer
            return answer
        }
        func kill9(_ pid: pid_t) {
            guard pid > 1, pid != getpid(), !swept.processes.contains(pid) else { return }
            if kill(pid, SIGKILL) == 0 { swept.processes.append(pid) }
        }
        func remove(_ path: String) {
            var status = stat()
            guard lstat(path, &status) == 0 else { return }
            if (try? FileManager.default.removeItem(atPath: path)) != nil { swept.paths.append(path) }
        }

        // Namespaces (root only) and what runs in them.
        let namespaces = geteuid() == 0 ? entries(of: "/run/netns").filter { owner(of: $0).map(isDead) ?? false } : []
        for name in namespaces {
            let pids = (try? run(ipCommand, ["netns", "pids", name], timeout: 10).stdout) ?? ""
            for pid in pids.split(separator: "\n").compactMap({ pid_t($0) }) { kill9(pid) }
        }
        // Processes outside them that name a dead process's temporary files: a private
        // dbus-daemon (its configuration), a python-dbusmock on that bus (DBUS_*_ADDRESS), a
        // server or a client started with a path there.
        for entry in entries(of: "/proc") {
            guard let pid = pid_t(entry), pid != getpid() else { continue }
            let strings = nulSeparated("/proc/\(entry)/cmdline") + nulSeparated("/proc/\(entry)/environ").filter { $0.hasPrefix("DBUS_") }
            if strings.contains(where: { namesDeadProcess($0, in: directories, isDead) }) { kill9(pid) }
        }
        for name in namespaces {
            if (try? run(ipCommand, ["netns", "delete", name], timeout: 10).status) == 0 { swept.namespaces.append(name) }
            remove("/etc/netns/\(name)")
        }
        if geteuid() == 0 {
            for name in entries(of: "/etc/netns") where owner(of: name).map(isDead) ?? false { remove("/etc/netns/\(name)") }
        }
        for directory in directories {
            for name in entries(of: directory) where owner(of: name).map(isDead) ?? false { remove("\(directory)/\(name)") }
        }
        return swept
    }

    /// /tmp, and the temporary directory Foundation uses when TMPDIR names another.
    private static var temporaryDirectories: [String] {
        let foundation = FileManager.default.temporaryDirectory.path
        return foundation == "/tmp" || foundation.isEmpty ? ["/tmp"] : ["/tmp", foundation]
    }

    /// True when `text` names a file of ours (`DIRECTORY/rch<pid>-…`) whose pid is dead.
    private static func namesDeadProcess(_ text: String, in directories: [String], _ isDead: (pid_t) -> Bool) -> Bool {
        directories.contains { directory in
            var rest = Substring(text)
            while let range = rest.range(of: directory + "/rch") {
                let name = text[text.index(range.upperBound, offsetBy: -3)...]
                if let pid = owner(of: name), isDead(pid) { return true }
                rest = text[range.upperBound...]
            }
            return false
        }
    }

    /// The names in a directory (`opendir(3)`); none when it cannot be read.
    private static func entries(of path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A /proc file of NUL-separated strings (cmdline, environ); none when it cannot be read.
    private static func nulSeparated(_ path: String) -> [String] {
        let bytes: [UInt8]
        do {
            let descriptor = try FileDescriptor.open(path)
            bytes = try descriptor.readToEnd()
        } catch {
            return []
        }
        return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
