import CNetlink
import FoundationEssentials
import ReachabilitySystem
#if canImport(Glibc)
import Glibc
#endif

/// An error from libnl: which C function failed and libnl's text for the code (`nl_geterror`).
public struct NetlinkError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The libnl function that failed (`nl_connect`, `nl_recvmsgs`, …).
    public let function: String
    /// The positive `NLE_*` code.
    public let code: Int32

    public init(function: String, code: Int32) {
        self.function = function
        self.code = code < 0 ? -code : code
    }

    /// libnl's description of the code (`nl_geterror`).
    public var text: String { String(cString: nl_geterror(code)) }
    public var description: String { "\(function): \(text) (NLE \(code))" }
}

/// What one `receive()` call on a socket ended with.
enum NetlinkReceiveResult: Equatable {
    /// A datagram was read and its messages handed on.
    case received
    /// A datagram another process sent to the socket (its port, not the kernel's 0): dropped unread.
    case foreign(port: UInt32)
    /// `EAGAIN`: nothing left to read.
    case drained
    /// Messages were lost: the kernel dropped some (`ENOBUFS`, or `NLMSG_OVERRUN`), or a datagram
    /// was larger than the buffer. Keep draining, then re-dump.
    case overrun
    case failed(Errno)
}

/// A thin owner of one `struct nl_sock` on NETLINK_ROUTE (swift-system style: each method names
/// the C function it wraps and throws `NetlinkError`). Every valid message of a dump is handed to
/// `handler`, from the thread that calls `dump(_:)`; notifications are read by `receive(_:)`.
final class NetlinkSocket {
    private let sock: OpaquePointer
    private let receiver: Receiver
    /// Where `receive(_:)` reads datagrams: allocated at the first one, grown when one did not fit.
    private var datagramBuffer = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    private let initialDatagramBufferSize: Int

    /// Holds the message handler for the capture-free C callback: a C function pointer cannot
    /// capture, so the callback gets its context through an `Unmanaged` pointer.
    final class Receiver {
        var handler: (OpaquePointer) -> Void
        init(_ handler: @escaping (OpaquePointer) -> Void) { self.handler = handler }
    }

    /// `nl_socket_alloc` + `nl_connect(NETLINK_ROUTE)` + `nl_socket_modify_cb(NL_CB_VALID)`.
    /// The socket belongs to the network namespace of the calling thread for its whole life.
    /// - Parameters:
    ///   - handler: gets each message of a dump (`dump(_:)`), as libnl received it.
    ///   - datagramBufferSize: where `receive(_:)` starts. The kernel builds a notification in a
    ///     page or a few (`NLMSG_GOODSIZE`, or the exact size of a link's attributes), so a larger
    ///     datagram is rare, and costs a re-dump once; tests make it small to see that happen.
    init(handler: @escaping (OpaquePointer) -> Void = { _ in }, datagramBufferSize: Int = 32 * 1024) throws {
        self.initialDatagramBufferSize = max(datagramBufferSize, NetlinkDatagram.headerSize)
        guard let sock = nl_socket_alloc() else { throw NetlinkError(function: "nl_socket_alloc", code: NLE_NOMEM) }
        self.sock = sock
        self.receiver = Receiver(handler)
        let rc = nl_connect(sock, NETLINK_ROUTE)
        guard rc == 0 else {
            nl_socket_free(sock)
            throw NetlinkError(function: "nl_connect", code: rc)
        }
        // Messages larger than the default buffer are read in full (MSG_PEEK first).
        nl_socket_enable_msg_peek(sock)
        let context = Unmanaged.passUnretained(receiver).toOpaque()
        nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, { message, arg in
            guard let message, let arg else { return Int32(NL_OK.rawValue) }
            Unmanaged<Receiver>.fromOpaque(arg).takeUnretainedValue().handler(message)
            return Int32(NL_OK.rawValue)
        }, context)
    }

    deinit {
        nl_socket_free(sock)
        datagramBuffer.deallocate()
    }

    /// The socket's file descriptor (`nl_socket_get_fd`), for a `DispatchSourceRead`.
    var fileDescriptor: Int32 { nl_socket_get_fd(sock) }

    /// `nl_socket_set_nonblocking`.
    func setNonBlocking() throws {
        let rc = nl_socket_set_nonblocking(sock)
        guard rc == 0 else { throw NetlinkError(function: "nl_socket_set_nonblocking", code: rc) }
    }

    /// `nl_socket_set_buffer_size` (SO_RCVBUF, capped by net.core.rmem_max), then, when allowed
    /// (CAP_NET_ADMIN), SO_RCVBUFFORCE so a big buffer is really big.
    func setReceiveBufferSize(_ bytes: Int) throws {
        let rc = nl_socket_set_buffer_size(sock, Int32(clamping: bytes), 0)
        guard rc == 0 else { throw NetlinkError(function: "nl_socket_set_buffer_size", code: rc) }
        var size = Int32(clamping: bytes)
        _ = setsockopt(fileDescriptor, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// `nl_socket_add_membership`, once per group (the variadic `nl_socket_add_memberships` cannot be called from Swift).
    func addMemberships(_ groups: [rtnetlink_groups]) throws {
        for group in groups {
            let rc = nl_socket_add_membership(sock, Int32(group.rawValue))
            guard rc == 0 else { throw NetlinkError(function: "nl_socket_add_membership(\(group.rawValue))", code: rc) }
        }
    }

    /// Reads one datagram (`recvfrom(2)`, `MSG_DONTWAIT | MSG_TRUNC`) and hands each message of
    /// it to `body` in place (`NetlinkDatagram`). This is the notifications' path: it reads once
    /// per datagram into a buffer kept for the next one, where libnl's `nl_recvmsgs` peeks first
    /// (`MSG_PEEK`), allocates a buffer per datagram and copies each message into an `nl_msg`.
    /// A datagram that did not come from the kernel (sender port not 0) is dropped unread:
    /// another process may send to this socket, and only the kernel's word counts.
    func receive(_ body: (UnsafeRawBufferPointer) -> Void) -> NetlinkReceiveResult {
        if datagramBuffer.baseAddress == nil {
            datagramBuffer = .allocate(byteCount: initialDatagramBufferSize, alignment: 8)
        }
        var sender = sockaddr_nl()
        var senderLength = socklen_t(MemoryLayout<sockaddr_nl>.size)
        let received: Int
        do {
            received = try withUnsafeMutablePointer(to: &sender) { (pointer) throws(Errno) -> Int in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(Errno) -> Int in
                    try retryingOnInterrupt("recvfrom (netlink)") {
                        recvfrom(fileDescriptor, datagramBuffer.baseAddress, datagramBuffer.count,
                                 CInt(MSG_DONTWAIT | MSG_TRUNC), address, &senderLength)
                    }
                }
            }
        } catch {
            switch error.rawValue {
            case EAGAIN: return .drained
            case ENOBUFS: return .overrun
            default: return .failed(error)
            }
        }
        guard sender.nl_pid == 0 else { return .foreign(port: sender.nl_pid) }
        guard received <= datagramBuffer.count else {
            // MSG_TRUNC gave the datagram's real length: the rest of it is gone. Make room for
            // one that size and have the state read again.
            datagramBuffer.deallocate()
            datagramBuffer = .allocate(byteCount: NetlinkAttributes.aligned(received), alignment: 8)
            return .overrun
        }
        var overrun = false
        NetlinkDatagram.forEach(in: UnsafeRawBufferPointer(rebasing: datagramBuffer[0..<received])) { item in
            switch item {
            case .message(let message): body(message)
            case .overrun: overrun = true
            case .error: break   // an answer to a request; this socket sends none
            }
        }
        return overrun ? .overrun : .received
    }

    /// `nl_rtgen_request(type, AF_UNSPEC, NLM_F_DUMP)` then `nl_recvmsgs_default` until the dump
    /// is complete; on a blocking socket.
    func dump(_ type: Int32) throws {
        let rc = nl_rtgen_request(sock, type, AF_UNSPEC, NLM_F_DUMP)
        guard rc >= 0 else { throw NetlinkError(function: "nl_rtgen_request(\(type))", code: rc) }
        let received = nl_recvmsgs_default(sock)
        guard received >= 0 else { throw NetlinkError(function: "nl_recvmsgs(dump \(type))", code: received) }
    }
}
