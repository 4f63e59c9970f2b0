#if canImport(Glibc)
import Glibc
#endif

/// An inotify instance (`inotify_init1(2)`, non-blocking and close-on-exec): watches on paths,
/// and the events the kernel queued for them.
///
/// A class, so that a Dispatch read source's cancel handler can hold it: the descriptor is
/// closed when the last holder lets go, never while a source still watches it.
public final class Inotify: Sendable {
    /// The instance's descriptor, for a Dispatch read source.
    public var rawValue: CInt { descriptor.rawValue }
    private let descriptor: FileDescriptor

    /// A new instance with no watch.
    public init() throws(Errno) {
        let fd = try checkingErrno("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        descriptor = FileDescriptor(adopting: fd)
    }

    /// Which changes a watch reports, and what an event says (`IN_*`).
    public struct Mask: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32

        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// `IN_CREATE`: a file was made in the watched directory.
        public static let create = Mask(rawValue: UInt32(IN_CREATE))
        /// `IN_MODIFY`: a file was written.
        public static let modify = Mask(rawValue: UInt32(IN_MODIFY))
        /// `IN_CLOSE_WRITE`: a file open for writing was closed.
        public static let closeWrite = Mask(rawValue: UInt32(IN_CLOSE_WRITE))
        /// `IN_MOVED_FROM`: a file was renamed away from the directory.
        public static let movedFrom = Mask(rawValue: UInt32(IN_MOVED_FROM))
        /// `IN_MOVED_TO`: a file was renamed into the directory (how a file is replaced whole).
        public static let movedTo = Mask(rawValue: UInt32(IN_MOVED_TO))
        /// `IN_DELETE`: a file in the directory was removed.
        public static let delete = Mask(rawValue: UInt32(IN_DELETE))
        /// `IN_DELETE_SELF`: the watched path itself was removed.
        public static let deleteSelf = Mask(rawValue: UInt32(IN_DELETE_SELF))
        /// `IN_IGNORED` (reported, never asked for): the watch is gone.
        public static let ignored = Mask(rawValue: UInt32(IN_IGNORED))
        /// `IN_Q_OVERFLOW` (reported, never asked for): events were lost; look at everything.
        public static let queueOverflow = Mask(rawValue: UInt32(IN_Q_OVERFLOW))
        /// `IN_ISDIR` (reported, never asked for): the event is about a directory.
        public static let isDirectory = Mask(rawValue: UInt32(IN_ISDIR))
    }

    /// A watch, as `addWatch` returned it and events name it.
    public struct Watch: RawRepresentable, Hashable, Sendable {
        public let rawValue: CInt

        public init(rawValue: CInt) {
            self.rawValue = rawValue
        }
    }

    /// One `struct inotify_event`.
    public struct Event: Equatable, Sendable {
        /// The watch it came from (-1 for `queueOverflow`).
        public var watch: Watch
        /// What happened.
        public var mask: Mask
        /// Ties the `movedFrom` and `movedTo` of one rename together.
        public var cookie: UInt32
        /// The name of the file in the watched directory, as the kernel has it; nil for an event
        /// about the watched path itself.
        public var nameBytes: [UInt8]?

        public init(watch: Watch, mask: Mask, cookie: UInt32 = 0, nameBytes: [UInt8]?) {
            self.watch = watch; self.mask = mask; self.cookie = cookie; self.nameBytes = nameBytes
        }

        /// `nameBytes` as text (bytes that are not UTF-8 replaced).
        public var name: String? { nameBytes.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// Watches `path` for `mask` (`inotify_add_watch(2)`); the same path again gives the same
    /// watch, its mask replaced.
    public func addWatch(path: String, mask: Mask) throws(Errno) -> Watch {
        let fd = rawValue
        return Watch(rawValue: try checkingErrno("inotify_add_watch", path: path) { inotify_add_watch(fd, path, mask.rawValue) })
    }

    /// Ends a watch (`inotify_rm_watch(2)`); an `ignored` event for it follows.
    public func removeWatch(_ watch: Watch) throws(Errno) {
        let fd = rawValue
        _ = try checkingErrno("inotify_rm_watch") { inotify_rm_watch(fd, watch.rawValue) }
    }

    /// The events queued now, from one `read(2)` of at most `bufferSize` bytes (EINTR retried);
    /// none when there are none (`EAGAIN`). Call again until it returns none to take them all.
    /// The buffer is made at least one event with the longest name long, or the read fails.
    public func readEvents(bufferSize: Int = 4096) throws(Errno) -> [Event] {
        let size = max(bufferSize, Self.headerSize + Int(NAME_MAX) + 1)
        var buffer = [UInt8](repeating: 0, count: size)
        let fd = rawValue
        let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) in try retryingOnInterrupt("read") { Glibc.read(fd, raw.baseAddress, raw.count) } }
        }
        let count: Int
        do throws(Errno) {
            count = try received.get()
        } catch {
            if error.isWouldBlock { return [] }
            throw error.with(call: "read(inotify)")
        }
        return buffer.withUnsafeBytes { Self.decode(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// `struct inotify_event`'s fixed part: `wd`, `mask`, `cookie`, `len`, 4 bytes each, in that
    /// order (the kernel's ABI).
    static let headerSize = 16

    /// The events in `bytes` as `read(2)` returned them: each record's fields read by offset
    /// (no alignment assumed), its name up to the first NUL of its `len` bytes. A record cut
    /// short (a `len` past the end) keeps the name bytes that are there and ends the list.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        var events: [Event] = []
        var offset = 0
        while bytes.count - offset >= headerSize {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let cookie = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            let nameEnd = nameStart + min(length, bytes.count - nameStart)
            let name = bytes[nameStart..<nameEnd].prefix { $0 != 0 }
            events.append(Event(watch: Watch(rawValue: wd), mask: Mask(rawValue: mask), cookie: cookie,
                                nameBytes: name.isEmpty ? nil : Array(name)))
            offset = nameEnd
        }
        return events
    }
}
