#if canImport(Glibc)
import Glibc
#endif

/// What `stat(2)`/`lstat(2)` say about a file: its type, owner and permission bits.
public struct FileStatus: Equatable, Sendable {
    /// The file's type (`st_mode & S_IFMT`).
    public enum Kind: Equatable, Sendable {
        /// `S_IFREG`, `S_IFDIR`, `S_IFLNK` (only from `lstat`), `S_IFSOCK`; `other` for devices and pipes.
        case regularFile, directory, symbolicLink, socket, other
    }

    /// The file's type.
    public var kind: Kind
    /// The owner's user id (`st_uid`).
    public var ownerID: UInt32
    /// The permission bits with set-user-ID, set-group-ID and sticky (`st_mode & 07777`).
    public var permissions: UInt32

    public init(kind: Kind, ownerID: UInt32, permissions: UInt32) {
        self.kind = kind; self.ownerID = ownerID; self.permissions = permissions
    }

    /// What a `stat` structure says.
    init(_ info: stat) {
        let kind: Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regularFile
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        self.init(kind: kind, ownerID: info.st_uid, permissions: UInt32(info.st_mode) & 0o7777)
    }
}

extension FileSystem {
    /// What is at `path` (`lstat(2)`, or `stat(2)` when `followingLinks`); nil when nothing is
    /// (`ENOENT`, also for a dangling link that is followed).
    public static func status(of path: String, followingLinks: Bool = false) throws(Errno) -> FileStatus? {
        var info = stat()
        let result = followingLinks ? stat(path, &info) : lstat(path, &info)
        guard result == 0 else {
            let error = Errno.current(followingLinks ? "stat" : "lstat", path: path)
            if error == .noSuchFile { return nil }
            throw error
        }
        return FileStatus(info)
    }

    /// The names in `directory`, without `.` and `..`, in the order the file system gives them
    /// (`opendir(3)`, `readdir(3)`).
    public static func entries(of directory: String) throws(Errno) -> [String] {
        guard let stream = opendir(directory) else { throw Errno.current("opendir", path: directory) }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }

    /// Where the symbolic link at `path` points, as written in it (`readlink(2)`).
    public static func linkTarget(of path: String) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = try checkingErrno("readlink", path: path) { readlink(path, &buffer, buffer.count - 1) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
