#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// The first bytes of a regular file, as `readRegularFile` read them.
    public struct FilePrefix: Equatable, Sendable {
        /// At most the limit asked for.
        public var bytes: [UInt8]
        /// True when the file goes on past `bytes`: it is larger than the limit.
        public var isTruncated: Bool

        public init(bytes: [UInt8], isTruncated: Bool) {
            self.bytes = bytes; self.isTruncated = isTruncated
        }
    }

    /// Why `readRegularFile` read nothing.
    public enum ReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
        /// `open`, `fstat` or `read` failed: `ENOENT` when nothing is there, `ELOOP` for a
        /// symbolic link that is not followed, `EACCES`, …
        case system(Errno)
        /// The path names a FIFO, a device, a directory or a socket: nothing to read as a file.
        case notRegularFile(path: String, kind: FileStatus.Kind)

        /// `open PATH: No such file or directory`, `PATH: not a regular file`.
        public var description: String {
            switch self {
            case .system(let error): return error.description
            case .notRegularFile(let path, _): return "\(path): not a regular file"
            }
        }
    }

    /// Reads at most `limit` bytes of the regular file at `path`, and whether there was more:
    /// for files that someone else writes (a lease, a sysfs attribute), which must neither
    /// hang reachd nor fill its memory.
    ///
    /// Opened non-blocking (a FIFO without a writer is no wait) and, unless `followingLinks`,
    /// without following a symbolic link at the end of the path (`O_NOFOLLOW`); then `fstat(2)`
    /// on the open descriptor refuses anything but a regular file before a byte is read (so a
    /// FIFO, `/dev/zero`, a directory give `notRegularFile`, whatever the path pointed at).
    public static func readRegularFile(_ path: String, limit: Int, followingLinks: Bool = false) throws(ReadFailure) -> FilePrefix {
        try readRegularFile(path: path, limit: limit) { () throws(Errno) in
            try FileDescriptor.open(path, options: openOptions(followingLinks: followingLinks))
        }
    }

    /// `readRegularFile(_:limit:followingLinks:)` for a path whose bytes need not be UTF-8 (an
    /// interface's name as the kernel has it).
    public static func readRegularFile(pathBytes: [UInt8], limit: Int, followingLinks: Bool = false) throws(ReadFailure) -> FilePrefix {
        let shown = String(decoding: pathBytes.prefix { $0 != 0 }, as: UTF8.self)
        return try readRegularFile(path: shown, limit: limit) { () throws(Errno) in
            try FileDescriptor.open(pathBytes: pathBytes, options: openOptions(followingLinks: followingLinks))
        }
    }

    private static func openOptions(followingLinks: Bool) -> FileDescriptor.OpenOptions {
        followingLinks ? [.nonBlocking] : [.nonBlocking, .noFollow]
    }

    private static func readRegularFile(path: String, limit: Int,
                                        open: () throws(Errno) -> FileDescriptor) throws(ReadFailure) -> FilePrefix {
        let descriptor: FileDescriptor
        do throws(Errno) { descriptor = try open() } catch { throw .system(error.with(call: error.call, path: path)) }
        let kind: FileStatus.Kind
        do throws(Errno) { kind = try descriptor.status().kind } catch { throw .system(error.with(call: error.call, path: path)) }
        guard kind == .regularFile else { throw .notRegularFile(path: path, kind: kind) }
        // One byte past the limit tells a file of exactly `limit` bytes from a larger one.
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try descriptor.read(upTo: limit < Int.max ? limit + 1 : limit)
        } catch {
            throw .system(error.with(call: error.call, path: path))
        }
        guard bytes.count > limit else { return FilePrefix(bytes: bytes, isTruncated: false) }
        return FilePrefix(bytes: Array(bytes.prefix(limit)), isTruncated: true)
    }
}
