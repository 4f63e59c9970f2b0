import CNetlink
import FoundationEssentials
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

    /// `-NLE_NOMEM` from a receive is the kernel's ENOBUFS: the socket buffer overflowed and
    /// messages were lost, and the monitor must dump the kernel's state again.
    public var isOverrun: Bool { code == NLE_NOMEM }
}

/// What one `receive()` call on a socket ended with.
enum NetlinkReceiveResult: Equatable {
    /// At least one datagram was read and handed to the callback.
    case received
    /// `-NLE_AGAIN`: nothing left to read (non-blocking socket).
    case drained
    /// `-NLE_NOMEM` (ENOBUFS): the kernel dropped messages; keep draining, then re-dump.
    case overrun
    case failed(NetlinkError)
}

/// A thin owner of one `struct nl_sock` on NETLINK_ROUTE (swift-system style: each method names
/// the libnl function it wraps and throws `NetlinkError`). Every valid message received is handed
/// to `handler`, from the thread that calls `receive()` or `dump(_:)`.
final class NetlinkSocket {
    private let sock: OpaquePointer
    private let receiver: Receiver

    /// Holds the message handler for the capture-free C callback: a C function pointer cannot
    /// capture, so the callback gets its context through an `Unmanaged` pointer.
    final class Receiver {
        var handler: (OpaquePointer) -> Void
        init(_ handler: @escaping (OpaquePointer) -> Void) { self.handler = handler }
    }

    /// `nl_socket_alloc` + `nl_connect(NETLINK_ROUTE)` + `nl_socket_modify_cb(NL_CB_VALID)`.
    /// The socket belongs to the network namespace of the calling thread for its whole life.
    init(handler: @escaping (OpaquePointer) -> Void) throws {
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

    deinit { nl_socket_free(sock) }

    /// The socket's file descriptor (`nl_socket_get_fd`), for a `DispatchSourceRead`.
    var fileDescriptor: Int32 { nl_socket_get_fd(sock) }

    /// `nl_socket_set_nonblocking`.
    func setNonBlocking() throws {
        let rc = nl_socket_set_nonblocking(sock)
        guard rc == 0 else { throw NetlinkError(function: "nl_socket_set_nonblocking", code: rc) }
    }

    /// `nl_socket_disable_seq_check`: notifications carry sequence number 0.
    func disableSequenceCheck() { nl_socket_disable_seq_check(sock) }

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

    /// `nl_recvmsgs_default`: reads one datagram (or one multipart reply) and runs the callback on each message.
    func receive() -> NetlinkReceiveResult {
        let rc = nl_recvmsgs_default(sock)
        if rc >= 0 { return .received }
        switch -rc {
        case NLE_AGAIN: return .drained
        case NLE_NOMEM: return .overrun
        default: return .failed(NetlinkError(function: "nl_recvmsgs", code: rc))
        }
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
