#if canImport(Glibc)
import Glibc
#endif

/// The file-system calls of the daemon around its socket and files.
public enum FileSystem {
    /// Creates `path` and the directories above it that are missing, with `mode` (`mkdir(2)`,
    /// as `mkdir -p`). An existing directory is no error.
    public static func createDirectories(_ path: String, mode: UInt32) throws(Errno) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            guard mkdir(prefix, mode) != 0 else { continue }
            let error = Errno.current("mkdir", path: prefix)
            guard error.rawValue == EEXIST, try status(of: prefix, followingLinks: true)?.kind == .directory else { throw error }
        }
    }

    /// Removes `path` (`unlink(2)`); a path already gone is no error.
    public static func remove(_ path: String) throws(Errno) {
        guard unlink(path) == 0 else {
            let error = Errno.current("unlink", path: path)
            if error == .noSuchFile { return }
            throw error
        }
    }

    /// Renames `source` to `destination` atomically (`rename(2)`).
    public static func rename(_ source: String, to destination: String) throws(Errno) {
        _ = try checkingErrno("rename", path: destination) { Glibc.rename(source, destination) }
    }

    /// Sets the permission bits (`chmod(2)`).
    public static func setMode(_ path: String, _ mode: UInt32) throws(Errno) {
        _ = try checkingErrno("chmod", path: path) { chmod(path, mode) }
    }

    /// True when this process may write in `path` (`access(2)` with `W_OK`).
    public static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    /// Gives `path` to group `group`, leaving the owner (`chown(2)`).
    public static func setGroup(_ path: String, _ group: UInt32) throws(Errno) {
        _ = try checkingErrno("chown", path: path) { chown(path, uid_t.max, group) }
    }
}

/// The user and group database (`/etc/passwd`, `/etc/group`, NSS).
/// The user and group databases, through the reentrant calls: look-ups may run on any thread.
public enum UserDatabase {
    /// The group id of `name` (`getgrnam_r(3)`); nil when there is no such group.
    public static func groupID(named name: String) -> UInt32? {
        var size = 4096
        while size <= 1 << 20 {
            var group = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            var buffer = [CChar](repeating: 0, count: size)
            let status = getgrnam_r(name, &group, &buffer, size, &result)
            if status == ERANGE { size *= 4; continue }
            guard status == 0, result != nil else { return nil }
            return group.gr_gid
        }
        return nil
    }

    /// `gid` and the supplementary groups of `uid`'s user (`getpwuid_r(3)`, `getgrouplist(3)`);
    /// just `gid` when the user is unknown.
    public static func groups(ofUser uid: UInt32, primaryGroup gid: UInt32) -> [UInt32] {
        guard let name = userName(uid) else { return [gid] }
        var count: CInt = 64
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            let wanted = count
            if getgrouplist(name, gid, &groups, &count) >= 0 {
                return [gid] + groups.prefix(Int(count)).map { UInt32($0) }
            }
            // Too small: `count` now holds the number needed.
            guard count > wanted else { return [gid] }
        }
    }

    /// The name of `uid`'s user (`getpwuid_r(3)`); nil when there is none.
    public static func userName(_ uid: UInt32) -> String? {
        var size = 4096
        while size <= 1 << 20 {
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            let status = getpwuid_r(uid, &entry, &buffer, size, &result)
            if status == ERANGE { size *= 4; continue }
            guard status == 0, result != nil, let name = entry.pw_name else { return nil }
            return String(cString: name)
        }
        return nil
    }
}

/// `CLOCK_MONOTONIC`: never steps with the wall clock, and stands still while the machine is
/// suspended.
public enum MonotonicClock {
    /// Now, in nanoseconds (`clock_gettime(2)`).
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Now, in seconds (`clock_gettime(2)`).
    public static func seconds() -> Double {
        Double(nanoseconds()) / 1e9
    }
}

/// `CLOCK_BOOTTIME`: never steps with the wall clock, and counts the time the machine slept, so
/// a lifetime or an interval that spans a sleep is as long as it really was.
public enum BootClock {
    /// Now, in seconds since boot (`clock_gettime(2)`).
    public static func seconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
