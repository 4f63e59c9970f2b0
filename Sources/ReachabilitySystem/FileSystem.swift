#if canImport(Glibc)
import Glibc
#endif

/// The file-system calls of the daemon around its socket and files.
public enum FileSystem {
    /// What is at a path, as `lstat(2)` sees it (a link is not followed).
    public enum Kind: Sendable, Equatable {
        case socket, directory, regularFile, other
    }

    /// What is at `path` (`lstat(2)`); nil when nothing is.
    public static func kind(at path: String) throws(Errno) -> Kind? {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let error = Errno.current("lstat", path: path)
            if error == .noSuchFile { return nil }
            throw error
        }
        switch info.st_mode & S_IFMT {
        case S_IFSOCK: return .socket
        case S_IFDIR: return .directory
        case S_IFREG: return .regularFile
        default: return .other
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
    public static func setMode(_ path: String, _ mode: mode_t) throws(Errno) {
        _ = try checkingErrno("chmod", path: path) { chmod(path, mode) }
    }

    /// True when this process may write in `path` (`access(2)` with `W_OK`).
    public static func isWritable(_ path: String) -> Bool {
        access(path, W_OK) == 0
    }

    /// The group id of `name` (`getgrnam(3)`); nil when there is no such group.
    public static func groupID(named name: String) -> gid_t? {
        getgrnam(name).map { $0.pointee.gr_gid }
    }

    /// Gives `path` to group `group`, leaving the owner (`chown(2)`).
    public static func setGroup(_ path: String, _ group: gid_t) throws(Errno) {
        _ = try checkingErrno("chown", path: path) { chown(path, uid_t.max, group) }
    }
}
