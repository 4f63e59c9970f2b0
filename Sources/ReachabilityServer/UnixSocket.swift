import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A failed socket call: which call, on what path, and the errno text.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let path: String?
    public let errno: Int32

    public init(_ operation: String, path: String? = nil, errno: Int32 = Glibc.errno) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    public var description: String {
        let target = path.map { " \($0)" } ?? ""
        return "\(operation)\(target): \(String(cString: strerror(errno)))"
    }
}

/// Thin wrappers over the Unix socket calls the server needs (swift-system style: one C call
/// each, errors with errno).
public enum UnixSocket {
    /// Fills a `sockaddr_un` for `path` (`sun_path` holds at most 107 bytes plus NUL).
    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw SocketError("socket path too long", path: path, errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// `socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC [| SOCK_NONBLOCK])`.
    static func makeStreamSocket(nonBlocking: Bool) throws -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SocketError("socket") }
        return fd
    }

    /// `bind(2)` + `listen(2)` on a new non-blocking socket at `path`.
    public static func listen(path: String, backlog: Int32 = 4096) throws -> Int32 {
        var address = try address(path)
        let fd = try makeStreamSocket(nonBlocking: true)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { let e = SocketError("bind", path: path); close(fd); throw e }
        guard Glibc.listen(fd, backlog) == 0 else { let e = SocketError("listen", path: path); close(fd); throw e }
        return fd
    }

    /// `connect(2)` to `path` with a blocking socket; the caller owns the descriptor.
    public static func connect(path: String) throws -> Int32 {
        var address = try address(path)
        let fd = try makeStreamSocket(nonBlocking: false)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { let e = SocketError("connect", path: path); close(fd); throw e }
        return fd
    }

    /// Sets or clears O_NONBLOCK (`fcntl(2)`).
    public static func setNonBlocking(_ fd: Int32, _ on: Bool = true) throws {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { throw SocketError("fcntl(F_GETFL)") }
        let wanted = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        guard fcntl(fd, F_SETFL, wanted) == 0 else { throw SocketError("fcntl(F_SETFL)") }
    }

    /// True when `fd` is a listening Unix stream socket (`getsockopt(SO_ACCEPTCONN)`).
    public static func isListeningStreamSocket(_ fd: Int32) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 else { return false }
        return value != 0
    }
}

/// Process-wide settings a socket server needs.
public enum ProcessSetup {
    /// Ignores SIGPIPE, so a write to a vanished client is an EPIPE error and not the end of the
    /// daemon (`signal(2)`). The server also sends with MSG_NOSIGNAL.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Raises the soft RLIMIT_NOFILE to the hard limit (`setrlimit(2)`), so a thousand
    /// subscribers do not run out of descriptors. Returns the new soft limit.
    @discardableResult
    public static func raiseFileDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return UInt64(limit.rlim_cur)
    }
}
