#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_GENERIC` socket (`socket(2)` with `AF_NETLINK`, `SOCK_RAW`): requests go out as
/// bytes made elsewhere (`NL80211Request`, ReachabilityCore), replies come back as raw
/// datagrams for a pure reader (`NL80211Reply`). Needs no privilege for the dumps reachd asks
/// (nl80211's interfaces and stations). One thread at a time.
public struct GenericNetlinkSocket: ~Copyable, Sendable {
    static let netlinkGeneric: CInt = 16   // NETLINK_GENERIC, <linux/netlink.h>

    private let descriptor: FileDescriptor

    /// Opens the socket in the calling thread's network namespace; receives wait at most
    /// `timeout` seconds (`SO_RCVTIMEO`).
    /// - Throws: `Errno` of `socket(2)` or `setsockopt(2)`.
    public init(timeout: Double = 2) throws(Errno) {
        let fd = try checkingErrno("socket(AF_NETLINK, NETLINK_GENERIC)") {
            Glibc.socket(AF_NETLINK, CInt(SOCK_RAW.rawValue) | CInt(SOCK_CLOEXEC.rawValue), Self.netlinkGeneric)
        }
        let owned = FileDescriptor(adopting: fd)
        try owned.setTimeout(seconds: timeout)
        descriptor = owned
    }

    /// Sends one request (`send(2)`, EINTR retried); an unbound socket is bound on the way.
    public borrowing func send(_ request: [UInt8]) throws(Errno) {
        let fd = descriptor.rawValue
        let result: Result<Int, Errno> = request.withUnsafeBytes { raw in
            Result { () throws(Errno) in try retryingOnInterrupt("send (generic netlink)") { Glibc.send(fd, raw.baseAddress, raw.count, 0) } }
        }
        guard try result.get() == request.count else { throw Errno(EIO, call: "send (generic netlink)") }
    }

    /// Reads one datagram into `buffer` (`recv(2)` with `MSG_TRUNC`, EINTR retried).
    /// - Returns: the datagram's length.
    /// - Throws: `Errno` of `recv(2)` (`.wouldBlock` when the timeout ran out); `EMSGSIZE` when
    ///   the datagram was longer than `buffer`.
    public borrowing func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        let received = try retryingOnInterrupt("recv (generic netlink)") {
            Glibc.recv(descriptor.rawValue, buffer.baseAddress, buffer.count, CInt(MSG_TRUNC))
        }
        guard received <= buffer.count else { throw Errno(EMSGSIZE, call: "recv (generic netlink)") }
        return received
    }
}
