#if canImport(Glibc)
import Glibc
#endif

/// An error number (`errno`) with the call that set it, and the path the call was about.
///
/// The one error type of the system layer: every wrapper throws it, and every error of reachd
/// that carries errno text wraps it. Two values are equal when their numbers are, whatever the
/// call, so `catch Errno.noSuchFile` and `error == .wouldBlock` read as the C checks do.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The positive error number (`ENOENT`, …).
    public let rawValue: CInt
    /// The C function that failed (`connect`), or what was being done when there is none.
    public let call: String
    /// The file or socket path the call was about, when there is one.
    public let path: String?

    /// An error number without a call (for comparisons: `Errno(rawValue: EAGAIN)`).
    public init(rawValue: CInt) {
        self.init(rawValue, call: "")
    }

    /// The error `call` failed with, about `path` when there is one.
    public init(_ rawValue: CInt, call: String, path: String? = nil) {
        self.rawValue = rawValue; self.call = call; self.path = path
    }

    /// The thread's `errno` now, for the call that just failed. Read it right after the failing
    /// C call: any other call, Swift's included, may change it.
    public static func current(_ call: String, path: String? = nil) -> Errno {
        Errno(errno, call: call, path: path)
    }

    /// The same error number, said of another call or path.
    public func with(call: String, path: String? = nil) -> Errno {
        Errno(rawValue, call: call, path: path ?? self.path)
    }

    /// The C library's text for the number (`strerror(3)`): `No such file or directory`.
    public var text: String { String(cString: strerror(rawValue)) }

    /// `call path: text`, as in `connect /run/reachd/reachd.sock: Connection refused`; the text
    /// alone when there is no call.
    public var description: String {
        let target = path.map { " \($0)" } ?? ""
        let subject = call + target
        return subject.isEmpty ? text : "\(subject): \(text)"
    }

    public static func == (a: Errno, b: Errno) -> Bool { a.rawValue == b.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// `~=` for `catch` and `switch`: matches on the number alone.
    public static func ~= (pattern: Errno, value: any Error) -> Bool {
        (value as? Errno)?.rawValue == pattern.rawValue
    }
}

extension Errno {
    /// `EINTR`: a signal interrupted the call (retried by the wrappers).
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`/`EWOULDBLOCK`: a non-blocking descriptor is not ready, or a timeout ran out.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EINPROGRESS`: a non-blocking `connect(2)` goes on in the background.
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// `ENOENT`.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `ENOTDIR`.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `ECONNREFUSED`: nobody listens there.
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// `ECONNABORTED`: a connection went away before `accept(2)` took it.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// `EMFILE`: the process is out of descriptors.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ENFILE`: the system is out of descriptors.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// `ENAMETOOLONG`: a path longer than the call takes (a socket path over `sun_path`).
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `ECONNRESET`: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// `EPIPE`: the peer is gone.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ETIMEDOUT`.
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// `ENETUNREACH`.
    public static let networkUnreachable = Errno(rawValue: ENETUNREACH)
    /// `EHOSTUNREACH`.
    public static let hostUnreachable = Errno(rawValue: EHOSTUNREACH)
    /// `ENETDOWN`.
    public static let networkDown = Errno(rawValue: ENETDOWN)
    /// `EHOSTDOWN`.
    public static let hostDown = Errno(rawValue: EHOSTDOWN)
    /// `EPERM`: not permitted (a capability is missing).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EINVAL`.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EIO`.
    public static let ioError = Errno(rawValue: EIO)
    /// `EBADF`: the descriptor is not open (here: already closed).
    public static let badFileDescriptor = Errno(rawValue: EBADF)

    /// True for `EAGAIN` and `EWOULDBLOCK` (the same number on Linux, not everywhere).
    public var isWouldBlock: Bool { rawValue == EAGAIN || rawValue == EWOULDBLOCK }
}

/// Runs a C call that returns -1 and sets `errno` on failure, again while it fails with `EINTR`.
/// The one place that retries: a signal arriving during a call is never an error of it.
///
/// - Parameters:
///   - call: the C function's name, for the error.
///   - path: the path the call is about, for the error.
@inlinable
public func retryingOnInterrupt<Result: FixedWidthInteger>(_ call: String, path: String? = nil,
                                                            _ body: () -> Result) throws(Errno) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw Errno(code, call: call, path: path)
    }
}

/// Runs a C call that returns -1 and sets `errno` on failure, once (`close(2)` must not be
/// retried: Linux frees the descriptor even when it reports EINTR).
@inlinable
public func checkingErrno<Result: FixedWidthInteger>(_ call: String, path: String? = nil,
                                                      _ body: () -> Result) throws(Errno) -> Result {
    let result = body()
    if result == -1 { throw Errno(errno, call: call, path: path) }
    return result
}
