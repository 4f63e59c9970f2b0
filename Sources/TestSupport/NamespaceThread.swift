import Foundation
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// glibc functions that its headers declare only with `_GNU_SOURCE` (which Swift's Glibc module
/// does not define): looked up once by name.
enum GNUFunctions {
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    typealias PPoll = @convention(c) (UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?) -> Int32
    typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    static let setns: SetNS? = symbol("setns")
    static let ppoll: PPoll? = symbol("ppoll")
    static let prctl: Prctl? = symbol("prctl")

    /// `CLONE_NEWNET`.
    static let cloneNewNet: Int32 = 0x4000_0000
    /// `PR_SET_TIMERSLACK`.
    static let setTimerSlack: Int32 = 29

    private static func symbol<T>(_ name: String) -> T? {
        guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(pointer, to: T.self)
    }
}

/// An error of a system call made for a test fixture: `what` failed, with errno's text (`Errno`).
public struct FixtureError: Error, CustomStringConvertible {
    /// The number and the call.
    public let errno: Errno
    public var description: String { errno.description }
    init(_ what: String, errno code: Int32 = Glibc.errno) {
        errno = Errno(code, call: what)
    }
}

/// Runs `body` on a new thread that first enters `namespace`'s network namespace (`setns`), and
/// returns what it returned. A socket or tun device made there belongs to that namespace for good,
/// and can be used from any thread afterwards; the thread itself ends with `body`, so no thread
/// of the test process is left in another namespace.
public func inNetworkNamespace<T>(_ namespace: TestNamespace, _ body: @escaping @Sendable () throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let path = "/run/netns/\(namespace.name)"
    let thread = Thread {
        defer { done.signal() }
        box.result = Result {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FixtureError("open \(path)") }
            defer { close(fd) }
            guard let setns = GNUFunctions.setns else { throw FixtureError("setns not found in libc", errno: ENOSYS) }
            guard setns(fd, GNUFunctions.cloneNewNet) == 0 else { throw FixtureError("setns \(path)") }
            return try body()
        }
    }
    thread.start()
    done.wait()
    guard let result = box.result else { throw FixtureError("the namespace thread returned nothing", errno: EINVAL) }
    return try result.get()
}

/// A thread's result, handed over after a semaphore.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, Error>?
}

/// CLOCK_MONOTONIC in nanoseconds.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
