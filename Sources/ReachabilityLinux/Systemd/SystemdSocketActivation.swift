import CSystemd
import ReachabilitySystem

/// A failed sd-daemon call: the function (`sd_listen_fds`) and its error number.
public struct SystemdError: Error, Equatable, Sendable, CustomStringConvertible {
    public var errno: Errno
    /// The C function that failed (`sd_listen_fds`).
    public var function: String { errno.call }
    /// - Parameter errno: the positive error number (sd-daemon returns its negation).
    public init(function: String, errno: Int32) { self.errno = Errno(errno, call: function) }
    public var description: String { errno.description }
}

/// Socket activation (`sd_listen_fds(3)`): the sockets systemd passed to the process, from
/// `SD_LISTEN_FDS_START` (fd 3) on, when `reachd.socket` started the service.
public enum SystemdSocketActivation {
    /// The first passed file descriptor (`SD_LISTEN_FDS_START`).
    public static let firstFileDescriptor: Int32 = 3

    /// The file descriptors systemd passed (`$LISTEN_FDS`, `$LISTEN_PID`), empty when none.
    /// Unsets those variables so children do not inherit them, and marks the fds close-on-exec.
    public static func listenFileDescriptors() throws(SystemdError) -> [Int32] {
        let n = sd_listen_fds(1)
        guard n >= 0 else { throw SystemdError(function: "sd_listen_fds", errno: -n) }
        return (0..<n).map { firstFileDescriptor + $0 }
    }

    /// The first of `fds` that is a listening `AF_UNIX` stream socket (`sd_is_socket_unix(3)`),
    /// bound to `path` when given.
    public static func unixStreamListener(among fds: [Int32], path: String? = nil) -> Int32? {
        fds.first { fd in
            if let path {
                return path.withCString { sd_is_socket_unix(fd, FileDescriptor.SocketType.stream.rawValue, 1, $0, 0) } > 0
            }
            return sd_is_socket_unix(fd, FileDescriptor.SocketType.stream.rawValue, 1, nil, 0) > 0
        }
    }

    /// The listening varlink socket systemd passed, or nil when the daemon was started without
    /// socket activation (it then creates its own socket).
    public static func passedUnixStreamListener() throws(SystemdError) -> Int32? {
        unixStreamListener(among: try listenFileDescriptors())
    }
}
