/// One TCP socket of a sock_diag dump (`struct inet_diag_msg` and its `INET_DIAG_INFO`), the
/// fields the passive link-quality measurement reads.
public struct SockDiagRecord: Equatable, Hashable, Sendable {
    /// The family of the addresses below. An IPv6 socket talking IPv4 (`::ffff:a.b.c.d`) is
    /// given as IPv4: that is the route its packets take.
    public var family: AddressFamily
    /// The TCP state (`TCP_ESTABLISHED` = 1, …).
    public var state: UInt8
    public var source: AddressBits
    public var sourcePort: UInt16
    /// The peer.
    public var destination: AddressBits
    public var destinationPort: UInt16
    /// The device the socket is bound to (`idiag_if`, `SO_BINDTODEVICE`); 0 when it is not.
    public var boundInterface: Int
    /// The kernel's identity of the socket for its whole life (`idiag_cookie`), never reused.
    public var cookie: UInt64
    /// The owner (`idiag_uid`), for route look-ups that policy rules by user would change.
    public var uid: UInt32
    /// The firewall mark (`INET_DIAG_MARK`): only a reader with CAP_NET_ADMIN is told it.
    public var mark: UInt32?
    /// The socket's `tcp_info`, nil when the reply had none.
    public var info: TCPInfo?

    public init(family: AddressFamily, state: UInt8 = 1, source: AddressBits, sourcePort: UInt16,
                destination: AddressBits, destinationPort: UInt16, boundInterface: Int = 0, cookie: UInt64,
                uid: UInt32 = 0, mark: UInt32? = nil, info: TCPInfo?) {
        self.family = family; self.state = state; self.source = source; self.sourcePort = sourcePort
        self.destination = destination; self.destinationPort = destinationPort
        self.boundInterface = boundInterface; self.cookie = cookie; self.uid = uid; self.mark = mark; self.info = info
    }
}

/// The part of the kernel's `struct tcp_info` that is read. Each field is nil when the
/// attribute ends before it (an older kernel's shorter struct).
public struct TCPInfo: Equatable, Hashable, Sendable {
    /// Smoothed RTT (`tcpi_rtt`), microseconds; 0 before any measurement.
    public var rttMicroseconds: UInt32?
    /// The receiver's RTT estimate (`tcpi_rcv_rtt`), microseconds; 0 when none.
    public var receiverRttMicroseconds: UInt32?
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    public var totalRetransmits: UInt32?
    /// Bytes the peer acknowledged (`tcpi_bytes_acked`).
    public var bytesAcked: UInt64?
    /// Bytes received (`tcpi_bytes_received`).
    public var bytesReceived: UInt64?
    /// Segments sent, retransmissions included (`tcpi_segs_out`); wraps at 2^32.
    public var segmentsOut: UInt32?
    /// Segments received, bare ACKs included (`tcpi_segs_in`); wraps at 2^32.
    public var segmentsIn: UInt32?
    /// Retransmission time-outs in a row with nothing acknowledged since (`tcpi_retransmits`);
    /// 0 once the peer answers.
    public var consecutiveTimeouts: UInt8?
    /// Milliseconds since the socket last received an acknowledgement (`tcpi_last_ack_recv`).
    public var lastAckReceivedMs: UInt32?
    /// The lowest RTT seen (`tcpi_min_rtt`), microseconds; `UInt32.max` before any.
    public var minRttMicroseconds: UInt32?

    public init(rttMicroseconds: UInt32? = nil, receiverRttMicroseconds: UInt32? = nil, totalRetransmits: UInt32? = nil,
                bytesAcked: UInt64? = nil, bytesReceived: UInt64? = nil, segmentsOut: UInt32? = nil,
                minRttMicroseconds: UInt32? = nil, segmentsIn: UInt32? = nil, consecutiveTimeouts: UInt8? = nil,
                lastAckReceivedMs: UInt32? = nil) {
        self.rttMicroseconds = rttMicroseconds; self.receiverRttMicroseconds = receiverRttMicroseconds
        self.totalRetransmits = totalRetransmits; self.bytesAcked = bytesAcked; self.bytesReceived = bytesReceived
        self.segmentsOut = segmentsOut; self.minRttMicroseconds = minRttMicroseconds; self.segmentsIn = segmentsIn
        self.consecutiveTimeouts = consecutiveTimeouts; self.lastAckReceivedMs = lastAckReceivedMs
    }
}

extension AddressBits {
    /// 127.0.0.0/8 or ::1.
    public func isLoopback(_ family: AddressFamily) -> Bool {
        switch family {
        case .ipv4: return high >> 56 == 127
        case .ipv6: return high == 0 && low == 1
        }
    }

    /// 169.254.0.0/16 or fe80::/10.
    public func isLinkLocal(_ family: AddressFamily) -> Bool {
        switch family {
        case .ipv4: return high >> 48 == 0xa9fe
        case .ipv6: return high >> 54 == 0xfe80 >> 6
        }
    }

    /// 0.0.0.0 or ::.
    public var isUnspecified: Bool { high == 0 && low == 0 }

    /// The address's 4 (IPv4) or 16 (IPv6) bytes in network order.
    public func bytes(_ family: AddressFamily) -> [UInt8] {
        let count = family == .ipv4 ? 4 : 16
        return (0..<count).map { i in UInt8(truncatingIfNeeded: (i < 8 ? high >> (56 - 8 * i) : low >> (56 - 8 * (i - 8)))) }
    }
}
