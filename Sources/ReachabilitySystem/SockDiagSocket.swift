#if canImport(Glibc)
import Glibc
#endif

/// A `NETLINK_SOCK_DIAG` socket (`socket(2)` with `AF_NETLINK`, `SOCK_RAW`): the kernel's list of
/// TCP sockets, with each one's `tcp_info`, as `ss -ti` reads it. It sends `inet_diag_req_v2`
/// dump requests and hands back the raw reply datagrams; reading them is `SockDiagReply`'s job
/// (ReachabilityCore), by offset, since the kernel's `tcp_info` is longer than the C headers
/// here know.
///
/// Needs no privilege: every user may list the sockets of the network namespace the socket was
/// made in. Only the firewall mark (`INET_DIAG_MARK`) is reserved to CAP_NET_ADMIN.
/// One thread at a time.
public struct SockDiagSocket: ~Copyable, Sendable {
    // From <linux/netlink.h>, <linux/sock_diag.h> and <linux/inet_diag.h>, which Glibc's module
    // does not export.
    static let netlinkSockDiag: CInt = 4          // NETLINK_SOCK_DIAG
    static let sockDiagByFamily: UInt16 = 20      // SOCK_DIAG_BY_FAMILY
    static let requestFlag: UInt16 = 0x1          // NLM_F_REQUEST
    static let dumpFlags: UInt16 = 0x300          // NLM_F_ROOT | NLM_F_MATCH
    /// `sizeof(struct nlmsghdr)` + `sizeof(struct inet_diag_req_v2)`.
    static let requestSize = 16 + 56

    /// `INET_DIAG_INFO`'s bit in `idiag_ext` (1 << (INET_DIAG_INFO - 1)): ask for `tcp_info`.
    public static let extensionInfo: UInt8 = 1 << (2 - 1)

    /// The TCP states of a connection that can still carry data, as a mask for `idiag_states`
    /// (1 << TCP_ESTABLISHED, TCP_FIN_WAIT1, TCP_FIN_WAIT2, TCP_CLOSE_WAIT, TCP_LAST_ACK,
    /// TCP_CLOSING). Listeners, SYN_RECV and TIME_WAIT sockets carry no `tcp_info`.
    public static let connectedStates: UInt32 = [1, 4, 5, 8, 9, 11].reduce(0) { $0 | (1 << $1) }

    private let descriptor: FileDescriptor
    private var sequence: UInt32 = 0

    /// Opens the socket (`socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)`) in the
    /// calling thread's network namespace, for good. Receives wait at most `timeout` seconds
    /// (`SO_RCVTIMEO`): the kernel answers at once, the bound only guards against a lost reply.
    /// - Throws: `Errno` of `socket(2)` (`EPROTONOSUPPORT` on a kernel without sock_diag,
    ///   `EAFNOSUPPORT` where a sandbox forbids `AF_NETLINK`), or of `setsockopt(2)`.
    public init(timeout: Double = 2) throws(Errno) {
        let fd = try checkingErrno("socket(AF_NETLINK, NETLINK_SOCK_DIAG)") {
            Glibc.socket(AF_NETLINK, CInt(SOCK_RAW.rawValue) | CInt(SOCK_CLOEXEC.rawValue), Self.netlinkSockDiag)
        }
        let owned = FileDescriptor(adopting: fd)
        try owned.setTimeout(seconds: timeout)
        descriptor = owned
    }

    /// The descriptor number (for tests and diagnostics).
    public var rawValue: CInt { descriptor.rawValue }

    /// Sends one dump request for the TCP sockets of `family` (`send(2)` of an `nlmsghdr`
    /// `SOCK_DIAG_BY_FAMILY`, `NLM_F_REQUEST | NLM_F_DUMP`, and an `inet_diag_req_v2` with
    /// `IPPROTO_TCP`, `idiag_states = states`, `idiag_ext = extensions`); EINTR retried.
    /// - Returns: the request's sequence number, which every message of its reply carries.
    public mutating func requestTCPDump(family: IPAddress.Family, states: UInt32 = connectedStates,
                                        extensions: UInt8 = extensionInfo) throws(Errno) -> UInt32 {
        sequence &+= 1
        let sequence = self.sequence
        var request = [UInt8](repeating: 0, count: Self.requestSize)
        request.withUnsafeMutableBytes { raw in
            // struct nlmsghdr: len, type, flags, seq, pid (host order).
            raw.storeBytes(of: UInt32(Self.requestSize), toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: Self.sockDiagByFamily, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: Self.requestFlag | Self.dumpFlags, toByteOffset: 6, as: UInt16.self)
            raw.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
            // struct inet_diag_req_v2: sdiag_family, sdiag_protocol, idiag_ext, pad,
            // idiag_states, then an all-zero inet_diag_sockid (no filter).
            raw[16] = UInt8(family.rawValue)
            raw[17] = UInt8(IPPROTO_TCP)
            raw[18] = extensions
            raw.storeBytes(of: states, toByteOffset: 20, as: UInt32.self)
        }
        let fd = descriptor.rawValue
        let result: Result<Int, Errno> = request.withUnsafeBytes { raw in
            // An unbound netlink socket sends to the kernel (port 0) and is bound on the way.
            Result { () throws(Errno) in try retryingOnInterrupt("send (sock_diag)") { Glibc.send(fd, raw.baseAddress, raw.count, 0) } }
        }
        let sent = try result.get()
        guard sent == Self.requestSize else { throw Errno(EIO, call: "send (sock_diag)") }
        return sequence
    }

    /// Reads one datagram of a reply (`recv(2)` with `MSG_TRUNC`, EINTR retried) into `buffer`.
    /// - Returns: the datagram's length.
    /// - Throws: `Errno` of `recv(2)` (`.wouldBlock` when the timeout ran out); `EMSGSIZE` when
    ///   the datagram was longer than `buffer` (the rest of it is lost: start the dump again with
    ///   a larger one).
    public borrowing func receive(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        let received = try retryingOnInterrupt("recv (sock_diag)") {
            Glibc.recv(descriptor.rawValue, buffer.baseAddress, buffer.count, CInt(MSG_TRUNC))
        }
        guard received <= buffer.count else { throw Errno(EMSGSIZE, call: "recv (sock_diag)") }
        return received
    }

    /// Sends a request for `family` and hands each datagram of the reply to `body` until it
    /// answers true (it has read the end of the dump, `NLMSG_DONE`, or an `NLMSG_ERROR`).
    /// - Parameters:
    ///   - buffer: where datagrams are read; 32 KiB holds the largest the kernel builds for a
    ///     dump (it sizes them by the reader's buffer, at most 32 KiB).
    ///   - body: gets the datagram and the request's sequence number.
    public mutating func dumpTCP(family: IPAddress.Family, states: UInt32 = connectedStates,
                                 extensions: UInt8 = extensionInfo, buffer: UnsafeMutableRawBufferPointer,
                                 _ body: (_ datagram: UnsafeRawBufferPointer, _ sequence: UInt32) -> Bool) throws(Errno) {
        let sequence = try requestTCPDump(family: family, states: states, extensions: extensions)
        while true {
            let count = try receive(into: buffer)
            if count == 0 { throw Errno(EIO, call: "recv (sock_diag)") }
            if body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), sequence) { return }
        }
    }
}
