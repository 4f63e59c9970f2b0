/// What stopped a sock_diag reply from being read: `.kernel(errno:)` carries the positive errno
/// (`EPERM`, `ENOENT` when the kernel lacks inet_diag for the family, …).
public typealias SockDiagError = NetlinkReplyError<SockDiagReply>

/// Reads the datagrams of a sock_diag dump reply (`SOCK_DIAG_BY_FAMILY` messages of
/// `struct inet_diag_msg`, then `rtattr`s) by offset, every length checked against the bytes
/// given. The kernel's `struct tcp_info` grows with each release (it is longer than the C
/// headers this is built against), so `INET_DIAG_INFO` is read field by field, each only when
/// it ends inside the attribute. A record too short or with broken attributes is skipped and
/// counted; framing that breaks the walk (a message length past the datagram) throws.
public enum SockDiagReply: NetlinkReplyProtocol {
    /// Where the walk of one datagram ended.
    public struct Progress: Equatable, Sendable {
        /// `NLMSG_DONE` was read: the dump is complete.
        public var done: Bool
        /// Records that could not be read (too short, broken attributes).
        public var skipped: Int
    }

    /// The words of `SockDiagError`'s descriptions.
    public static let protocolName = "sock_diag", requestNoun = "dump", replyNoun = "dump"
    // <linux/sock_diag.h>
    static let typeSockDiag: UInt16 = 20       // SOCK_DIAG_BY_FAMILY
    // <linux/inet_diag.h>: struct inet_diag_msg (72 bytes).
    static let messageSize = 72
    static let uidOffset = 64                  // idiag_uid
    static let attributeInfo: UInt16 = 2       // INET_DIAG_INFO
    static let attributeMark: UInt16 = 15      // INET_DIAG_MARK
    // <linux/socket.h>
    static let familyIPv4: UInt8 = 2           // AF_INET
    static let familyIPv6: UInt8 = 10          // AF_INET6

    /// Offsets in `struct tcp_info` (include/uapi/linux/tcp.h; stable since each was added:
    /// the kernel only appends).
    enum TCPInfoOffset {
        static let retransmits = 2        // __u8 tcpi_retransmits
        static let lastAckReceived = 56   // __u32 tcpi_last_ack_recv
        static let rtt = 68               // __u32 tcpi_rtt
        static let receiverRtt = 92       // __u32 tcpi_rcv_rtt
        static let totalRetransmits = 100 // __u32 tcpi_total_retrans
        static let bytesAcked = 120       // __u64 tcpi_bytes_acked (Linux 4.1)
        static let bytesReceived = 128    // __u64 tcpi_bytes_received (Linux 4.1)
        static let segmentsOut = 136      // __u32 tcpi_segs_out (Linux 4.2)
        static let segmentsIn = 140       // __u32 tcpi_segs_in (Linux 4.2)
        static let minRtt = 148           // __u32 tcpi_min_rtt (Linux 4.6)
    }

    /// Reads one datagram, appending each socket to `records`.
    /// - Parameters:
    ///   - sequence: the request's sequence number; messages of another (a reply to an earlier,
    ///     abandoned request) are passed over. nil: all are read.
    /// - Throws: `SockDiagError`: the kernel's error, an overrun, or framing that cannot be walked.
    public static func parse(_ datagram: UnsafeRawBufferPointer, sequence: UInt32?,
                             into records: inout [SockDiagRecord]) throws(SockDiagError) -> Progress {
        try walk(datagram, sequence: sequence, into: &records) { _, _ in true }
    }

    /// Reads one datagram, appending each socket that `selection` admits to `records`: only the
    /// fixed header of the others is read (owner and cookie), their attributes never.
    /// - Throws: as `parse(_:sequence:into:)`.
    public static func parse(_ datagram: UnsafeRawBufferPointer, sequence: UInt32?, selection: inout SockDiagSelection,
                             into records: inout [SockDiagRecord]) throws(SockDiagError) -> Progress {
        try walk(datagram, sequence: sequence, into: &records) { uid, cookie in selection.admits(uid: uid, cookie: cookie) }
    }

    /// The walk of `parse`: `admit` gets each socket's owner and cookie.
    static func walk(_ datagram: UnsafeRawBufferPointer, sequence: UInt32?, into records: inout [SockDiagRecord],
                     admit: (_ uid: UInt32, _ cookie: UInt64) -> Bool) throws(SockDiagError) -> Progress {
        var skipped = 0
        let done = try NetlinkMessageWalk.walk(datagram, sequence: sequence, as: SockDiagReply.self) { type, _, payload in
            // NLMSG_NOOP and types this reader does not know are passed over.
            guard type == typeSockDiag else { return }
            guard payload.count >= messageSize else { skipped += 1; return }
            guard admit(payload.loadUnaligned(fromByteOffset: uidOffset, as: UInt32.self), cookie(payload)) else { return }
            if let record = record(payload) { records.append(record) } else { skipped += 1 }
        }
        return Progress(done: done, skipped: skipped)
    }

    /// `parse(_:sequence:into:)` on an array (tests and the fuzz target).
    public static func parse(_ bytes: [UInt8], sequence: UInt32? = nil,
                             into records: inout [SockDiagRecord]) throws(SockDiagError) -> Progress {
        let result: Result<Progress, SockDiagError> = bytes.withUnsafeBytes { raw in
            Result { () throws(SockDiagError) in try parse(raw, sequence: sequence, into: &records) }
        }
        return try result.get()
    }

    /// `parse(_:sequence:selection:into:)` on an array (tests).
    public static func parse(_ bytes: [UInt8], sequence: UInt32? = nil, selection: inout SockDiagSelection,
                             into records: inout [SockDiagRecord]) throws(SockDiagError) -> Progress {
        let result: Result<Progress, SockDiagError> = bytes.withUnsafeBytes { raw in
            Result { () throws(SockDiagError) in try parse(raw, sequence: sequence, selection: &selection, into: &records) }
        }
        return try result.get()
    }

    /// One `struct inet_diag_msg` and its attributes; nil when too short or broken.
    static func record(_ payload: UnsafeRawBufferPointer) -> SockDiagRecord? {
        guard payload.count >= messageSize else { return nil }
        let rawFamily = payload[0]
        var family: AddressFamily
        switch rawFamily {
        case familyIPv4: family = .ipv4
        case familyIPv6: family = .ipv6
        default: return nil
        }
        // struct inet_diag_sockid at 4: sport, dport (network order), src[4], dst[4] (network
        // order), if, cookie[2] (host order, low word first).
        let sourcePort = UInt16(bigEndian: payload.loadUnaligned(fromByteOffset: 4, as: UInt16.self))
        let destinationPort = UInt16(bigEndian: payload.loadUnaligned(fromByteOffset: 6, as: UInt16.self))
        var source = address(payload, at: 8, family: family)
        var destination = address(payload, at: 24, family: family)
        if family == .ipv6, let mappedSource = unmapped(source), let mappedDestination = unmapped(destination) {
            family = .ipv4; source = mappedSource; destination = mappedDestination
        }
        let boundInterface = Int(payload.loadUnaligned(fromByteOffset: 40, as: UInt32.self))
        let cookie = cookie(payload)
        let uid = payload.loadUnaligned(fromByteOffset: uidOffset, as: UInt32.self)

        var info: TCPInfo?
        var mark: UInt32?
        var offset = aligned(messageSize)
        while payload.count - offset >= 4 {
            let length = Int(payload.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            let type = payload.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self) & 0x3fff  // without NLA_F_NESTED, NLA_F_NET_BYTEORDER
            guard length >= 4, length <= payload.count - offset else { return nil }
            let value = UnsafeRawBufferPointer(rebasing: payload[(offset + 4)..<(offset + length)])
            switch type {
            case attributeInfo: info = tcpInfo(value)
            case attributeMark: if value.count >= 4 { mark = value.loadUnaligned(as: UInt32.self) }
            default: break
            }
            offset += aligned(length)
        }
        return SockDiagRecord(family: family, state: payload[1], source: source, sourcePort: sourcePort,
                              destination: destination, destinationPort: destinationPort,
                              boundInterface: boundInterface, cookie: cookie, uid: uid, mark: mark, info: info)
    }

    /// `idiag_cookie`: two words in host order, the low one first.
    static func cookie(_ payload: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(payload.loadUnaligned(fromByteOffset: 44, as: UInt32.self))
            | UInt64(payload.loadUnaligned(fromByteOffset: 48, as: UInt32.self)) << 32
    }

    /// The fields of `struct tcp_info` that end inside `value`.
    static func tcpInfo(_ value: UnsafeRawBufferPointer) -> TCPInfo {
        func u32(_ offset: Int) -> UInt32? {
            offset + 4 <= value.count ? value.loadUnaligned(fromByteOffset: offset, as: UInt32.self) : nil
        }
        func u64(_ offset: Int) -> UInt64? {
            offset + 8 <= value.count ? value.loadUnaligned(fromByteOffset: offset, as: UInt64.self) : nil
        }
        return TCPInfo(rttMicroseconds: u32(TCPInfoOffset.rtt), receiverRttMicroseconds: u32(TCPInfoOffset.receiverRtt),
                       totalRetransmits: u32(TCPInfoOffset.totalRetransmits), bytesAcked: u64(TCPInfoOffset.bytesAcked),
                       bytesReceived: u64(TCPInfoOffset.bytesReceived), segmentsOut: u32(TCPInfoOffset.segmentsOut),
                       minRttMicroseconds: u32(TCPInfoOffset.minRtt), segmentsIn: u32(TCPInfoOffset.segmentsIn),
                       consecutiveTimeouts: TCPInfoOffset.retransmits < value.count ? value[TCPInfoOffset.retransmits] : nil,
                       lastAckReceivedMs: u32(TCPInfoOffset.lastAckReceived))
    }

    /// 4 (IPv4: the first word of the field) or 16 address bytes at `offset`, network order.
    static func address(_ payload: UnsafeRawBufferPointer, at offset: Int, family: AddressFamily) -> AddressBits {
        let high = UInt64(bigEndian: payload.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        switch family {
        case .ipv4: return AddressBits(high: high & 0xffff_ffff_0000_0000, low: 0)
        case .ipv6: return AddressBits(high: high, low: UInt64(bigEndian: payload.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
        }
    }

    /// The IPv4 address of an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`), as IPv4 bits.
    static func unmapped(_ address: AddressBits) -> AddressBits? {
        guard address.high == 0, address.low >> 32 == 0xffff else { return nil }
        return AddressBits(high: (address.low & 0xffff_ffff) << 32, low: 0)
    }

    /// Netlink's 4-byte alignment (NLMSG_ALIGN, RTA_ALIGN).
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }
}
