#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor that this value owns: closed exactly once, by `close()` or when the
/// value ends without having been closed or handed on (`release()`).
///
/// Non-copyable, so the compiler rules out a second close and a use after close. A descriptor
/// shared with Dispatch sources lives in an `Optional` that is emptied (`take()`) to close it.
public struct FileDescriptor: ~Copyable, Sendable {
    /// The descriptor number, for calls the layer does not wrap (Dispatch sources, libnl).
    public let rawValue: CInt

    /// Takes ownership of `rawValue` (which must be open).
    public init(adopting rawValue: CInt) {
        self.rawValue = rawValue
    }

    deinit {
        _ = Glibc.close(rawValue)
    }

    /// Closes the descriptor (`close(2)`, never retried: Linux frees it even on EINTR).
    public consuming func close() throws(Errno) {
        let fd = rawValue
        discard self
        _ = try checkingErrno("close") { Glibc.close(fd) }
    }

    /// Hands the descriptor number on without closing it: the caller owns it now.
    public consuming func release() -> CInt {
        let fd = rawValue
        discard self
        return fd
    }

    /// How `open` opens a file.
    public enum AccessMode: Sendable {
        /// `O_RDONLY`.
        case readOnly
        /// `O_WRONLY`.
        case writeOnly
        /// `O_RDWR`.
        case readWrite
    }

    /// What `open` does beyond the access mode (`O_CLOEXEC` is always set).
    public struct OpenOptions: OptionSet, Sendable {
        public let rawValue: CInt

        public init(rawValue: CInt) {
            self.rawValue = rawValue
        }

        /// `O_NOFOLLOW`: a symbolic link as the last component is refused (`ELOOP`), so a link
        /// planted where a file is expected cannot point the read at another file or a device.
        public static let noFollow = OpenOptions(rawValue: O_NOFOLLOW)
        /// `O_NONBLOCK`: opening a FIFO that has no writer returns at once instead of waiting
        /// for one (and reads from it never wait).
        public static let nonBlocking = OpenOptions(rawValue: O_NONBLOCK)
    }

    /// Opens an existing file (`open(2)` with `O_RDONLY`, `O_WRONLY` or `O_RDWR`, the
    /// `options`, and `O_CLOEXEC`).
    public static func open(_ path: String, _ mode: AccessMode = .readOnly, options: OpenOptions = []) throws(Errno) -> FileDescriptor {
        try open(cPath: path, shownAs: path, mode, options: options)
    }

    /// Opens an existing file whose path is bytes that need not be UTF-8 (an interface's name
    /// as the kernel has it); see `open(_:_:options:)`. A NUL in `pathBytes` ends the path.
    public static func open(pathBytes: [UInt8], _ mode: AccessMode = .readOnly, options: OpenOptions = []) throws(Errno) -> FileDescriptor {
        let shown = String(decoding: pathBytes.prefix { $0 != 0 }, as: UTF8.self)
        return try open(cPath: pathBytes.map { CChar(bitPattern: $0) } + [0], shownAs: shown, mode, options: options)
    }

    private static func open(cPath: UnsafePointer<CChar>, shownAs path: String, _ mode: AccessMode,
                             options: OpenOptions) throws(Errno) -> FileDescriptor {
        let flags: CInt
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .writeOnly: flags = O_WRONLY
        case .readWrite: flags = O_RDWR
        }
        let fd = try retryingOnInterrupt("open", path: path) { Glibc.open(cPath, flags | options.rawValue | O_CLOEXEC) }
        return FileDescriptor(adopting: fd)
    }

    /// Creates and opens a new file whose name is `template` with its trailing `XXXXXX` made
    /// unique (`mkstemp(3)`: mode 0600; then close-on-exec); `path` receives the name.
    public static func createTemporary(template: String, path: inout String) throws(Errno) -> FileDescriptor {
        var name = Array(template.utf8CString)
        // mkostemp(3), which takes O_CLOEXEC, is hidden behind _GNU_SOURCE; so no child may be
        // spawned (`ChildProcess`) between mkstemp and the flag, or it would inherit the file.
        let (fd, code): (CInt, CInt) = ChildProcess.withoutSpawning {
            let fd = name.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
            let code = errno
            if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fd, code)
        }
        guard fd >= 0 else { throw Errno(code, call: "mkstemp", path: template) }
        path = String(decoding: name.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return FileDescriptor(adopting: fd)
    }

    /// A close-on-exec duplicate of a descriptor that someone else owns (`fcntl(2)`
    /// `F_DUPFD_CLOEXEC`), numbered `minimum` or above: a descriptor lent by a D-Bus message,
    /// kept after the message is gone.
    public static func duplicate(_ descriptor: CInt, minimum: CInt = 3) throws(Errno) -> FileDescriptor {
        FileDescriptor(adopting: try checkingErrno("fcntl(F_DUPFD_CLOEXEC)") { fcntl(descriptor, F_DUPFD_CLOEXEC, minimum) })
    }

    /// Sets the permission bits (`fchmod(2)`).
    public borrowing func setPermissions(_ mode: mode_t) throws(Errno) {
        _ = try checkingErrno("fchmod") { fchmod(rawValue, mode) }
    }

    /// Reads what is there, at most `buffer.count` bytes (`read(2)`); 0 at end of file.
    public borrowing func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Reads everything up to end of file (`read(2)` until it returns 0): a configuration file,
    /// a script.
    public borrowing func readToEnd() throws(Errno) -> [UInt8] {
        try read(upTo: Int.max)
    }

    /// Reads up to end of file, but at most `limit` bytes (`read(2)` until it returns 0 or
    /// `limit` bytes came): a file that never ends (`/dev/zero`, a growing log) costs `limit`
    /// bytes, not all memory. A non-blocking descriptor with nothing to read throws
    /// `wouldBlock`.
    public borrowing func read(upTo limit: Int) throws(Errno) -> [UInt8] {
        let fd = rawValue
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: Swift.min(16 * 1024, Swift.max(limit, 0)))
        while bytes.count < limit {
            let wanted = Swift.min(buffer.count, limit - bytes.count)
            let received: Result<Int, Errno> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try retryingOnInterrupt("read") { Glibc.read(fd, raw.baseAddress, wanted) } }
            }
            let count = try received.get()
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
        }
        return bytes
    }

    /// What the open file is (`fstat(2)`): the file actually opened, not what the path names
    /// by the time `lstat` would look.
    public borrowing func status() throws(Errno) -> FileStatus {
        var info = stat()
        _ = try checkingErrno("fstat") { fstat(rawValue, &info) }
        return FileStatus(info)
    }

    /// Writes some of `bytes` (`write(2)`); returns how many went.
    public borrowing func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt("write") { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes` (`write(2)` until done: a short write goes on with the rest).
    public borrowing func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try Self.writeAll(bytes, to: rawValue)
    }

    /// Writes all of `text` as UTF-8 (see `writeAll(_:)`).
    public borrowing func writeAll(_ text: String) throws(Errno) {
        try Self.writeAll(text, to: rawValue)
    }

    static func writeAll(_ text: String, to fd: CInt) throws(Errno) {
        var text = text
        let result: Result<Void, Errno> = text.withUTF8 { bytes in
            Result { () throws(Errno) in try writeAll(UnsafeRawBufferPointer(bytes), to: fd) }
        }
        try result.get()
    }

    /// `write(2)` to a descriptor this process does not own (stdout, stderr) until all is written.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: CInt) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingOnInterrupt("write") {
                Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            // Zero from a regular write means no progress is possible (a full device).
            guard written > 0 else { throw Errno(EIO, call: "write") }
            offset += written
        }
    }

    /// Sets or clears `O_NONBLOCK` (`fcntl(2)` `F_GETFL`/`F_SETFL`).
    public borrowing func setNonBlocking(_ on: Bool = true) throws(Errno) {
        try Self.setNonBlocking(rawValue, on)
    }

    static func setNonBlocking(_ fd: CInt, _ on: Bool) throws(Errno) {
        let flags = try checkingErrno("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        _ = try checkingErrno("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, wanted) }
    }

    /// Sets `FD_CLOEXEC` (`fcntl(2)` `F_SETFD`), so programs this one starts do not inherit it.
    public borrowing func setCloseOnExec() throws(Errno) {
        _ = try checkingErrno("fcntl(F_SETFD)") { fcntl(rawValue, F_SETFD, FD_CLOEXEC) }
    }
}

/// The standard output and error of the process (never closed by this layer).
public enum StandardStream: CInt, Sendable {
    /// Descriptor 1.
    case output = 1
    /// Descriptor 2.
    case error = 2

    /// Writes all of `text` (`write(2)`, short writes continued, EINTR retried); a failure is
    /// ignored: there is nowhere left to report it.
    public func write(_ text: String) {
        try? FileDescriptor.writeAll(text, to: rawValue)
    }

    /// True when the stream is a terminal (`isatty(3)`).
    public var isTerminal: Bool { isatty(rawValue) == 1 }
}

/// Writes `text` whole to standard output or error (see `StandardStream.write`).
public func emit(_ text: String, to stream: StandardStream = .output) {
    stream.write(text)
}
