import FoundationEssentials

/// What the route look-up of a socket is asked: the kernel's route for these would be the
/// socket's. The owner and the mark matter where policy rules route by user or mark.
public struct SockDiagRouteQuery: Hashable, Sendable {
    public var family: AddressFamily
    public var destination: AddressBits
    public var source: AddressBits
    public var uid: UInt32
    /// The socket's firewall mark; nil when the dump did not tell it (no CAP_NET_ADMIN).
    public var mark: UInt32?

    public init(family: AddressFamily, destination: AddressBits, source: AddressBits, uid: UInt32 = 0, mark: UInt32? = nil) {
        self.family = family; self.destination = destination; self.source = source; self.uid = uid; self.mark = mark
    }
}

/// An address prefix of an interface (`192.168.1.20/24`): peers inside it are on the link
/// itself, and say nothing of the uplink's path to the internet.
public struct InterfacePrefix: Hashable, Sendable {
    public var family: AddressFamily
    public var address: AddressBits
    public var length: Int

    public init(family: AddressFamily, address: AddressBits, length: Int) {
        self.family = family; self.address = address; self.length = length
    }

    /// The prefix of an address as the monitor holds it.
    public init?(_ state: AddressState) {
        guard let bits = AddressBits(state.address, family: state.family) else { return nil }
        self.init(family: state.family, address: bits, length: state.prefixLength)
    }

    /// True when `address` of `family` lies inside the prefix.
    public func contains(_ address: AddressBits, family: AddressFamily) -> Bool {
        family == self.family && address.hasPrefix(self.address, length: length)
    }
}

/// Turns successive sock_diag dumps into link-quality samples (pure: no I/O, no clock).
///
/// It keeps each socket's counters from the previous dump, by cookie, and gives a
/// `QualitySample` (source `.passive`) only for a socket that moved data since: bytes acked or
/// received grew, or it retransmitted (a socket stuck retransmitting on a dead link moves no
/// bytes but tells the most). A keepalive probe or a bare ACK is not data. Peers on loopback,
/// link-local addresses, inside a prefix of the uplink's own addresses, or routed locally say
/// nothing about the path to the internet and are passed over. Sockets gone from the dump are
/// forgotten. The first dump only learns the counters; a socket that appears later is counted
/// from zero (it was opened, or reached a connected state, since the previous dump), unless the
/// previous dump may have passed it over (`SockDiagSelection`): then it is only learned.
///
/// The sockets' samples are not handed on one by one: `PerUserSampleReduction` makes them one
/// sample per uplink, each user (`uid`) one vote, so that many sockets of one user never outweigh
/// another user's traffic.
public struct PassiveSampleBook: Sendable {
    struct Counters: Sendable {
        var segmentsOut: UInt32
        var totalRetransmits: UInt32
        var bytesAcked: UInt64
        var bytesReceived: UInt64
        var segmentsIn: UInt32

        static let zero = Counters(segmentsOut: 0, totalRetransmits: 0, bytesAcked: 0, bytesReceived: 0, segmentsIn: 0)
    }

    /// A socket whose peer has not acknowledged anything for this long, through this many
    /// retransmission time-outs in a row, is stuck: what it received in the dump's interval came
    /// before it got stuck, and what it sent since is its retransmissions.
    static let stuckTimeouts: UInt8 = 2
    static let stuckSilenceMs: UInt32 = 1000

    private var previous: [UInt64: Counters] = [:]
    private var lastUptime: TimeInterval?

    public init() {}

    /// How many sockets the book remembers (those of the last dump with `tcp_info`).
    public var trackedSockets: Int { previous.count }

    /// Forgets everything: the next dump only learns the counters again (after a sleep, or
    /// when dumps failed for a while and their interval would mean nothing).
    public mutating func reset() {
        previous = [:]
        lastUptime = nil
    }

    /// Reads one complete dump taken at `uptime`.
    /// - Parameters:
    ///   - records: every socket of the dump (both families).
    ///   - ownPrefixes: each interface's own address prefixes, by index.
    ///   - uplink: the interface the kernel routes a socket's traffic out of; nil when the route
    ///     is local, refused or unknown (the socket is passed over). Asked only for sockets that
    ///     moved data and are not bound to a device.
    ///   - readBefore: whether the previous dump read a socket of this owner and cookie, had it
    ///     been there (`SockDiagSelection.readBefore`); false: one the book does not know is
    ///     learned, not counted from zero.
    /// - Returns: one sample per uplink (`PerUserSampleReduction`), one tally of segments per
    ///   uplink for the data-stall detector (`StallTallyReduction`; a stuck socket's received
    ///   segments are from before it got stuck and do not count), and the time since the
    ///   previous dump.
    public mutating func record(_ records: [SockDiagRecord], uptime: TimeInterval,
                                ownPrefixes: [Int: [InterfacePrefix]],
                                uplink: (SockDiagRouteQuery) -> Int?,
                                readBefore: (_ uid: UInt32, _ cookie: UInt64) -> Bool = { _, _ in true }) -> QualityDump {
        let first = lastUptime == nil
        let interval = lastUptime.map { uptime - $0 }
        lastUptime = uptime
        var current: [UInt64: Counters] = [:]
        current.reserveCapacity(records.count)
        var votes = PerUserSampleReduction()
        var stalls = StallTallyReduction()
        for record in records {
            guard let info = record.info,
                  let segmentsOut = info.segmentsOut, let totalRetransmits = info.totalRetransmits,
                  let bytesAcked = info.bytesAcked, let bytesReceived = info.bytesReceived else { continue }
            let now = Counters(segmentsOut: segmentsOut, totalRetransmits: totalRetransmits,
                               bytesAcked: bytesAcked, bytesReceived: bytesReceived, segmentsIn: info.segmentsIn ?? 0)
            let before = previous[record.cookie]
            current[record.cookie] = now
            if before == nil && (first || !readBefore(record.uid, record.cookie)) { continue }
            let base = before ?? .zero
            // Byte counters are 64-bit and never wrap; one that went back is a socket the book
            // never saw before under this cookie: counted afresh.
            let acked = now.bytesAcked >= base.bytesAcked ? now.bytesAcked - base.bytesAcked : now.bytesAcked
            let received = now.bytesReceived >= base.bytesReceived ? now.bytesReceived - base.bytesReceived : now.bytesReceived
            let retransmitted = UInt64(now.totalRetransmits &- base.totalRetransmits)
            // Segment counters are 32-bit and wrap: the difference modulo 2^32 is what moved.
            let segmentsSent = UInt64(now.segmentsOut &- base.segmentsOut)
            let segmentsIn = UInt64(now.segmentsIn &- base.segmentsIn)
            let moved = acked > 0 || received > 0 || retransmitted > 0
            guard moved || segmentsSent > 0 || segmentsIn > 0 else { continue }
            guard !record.destination.isLoopback(record.family), !record.destination.isLinkLocal(record.family),
                  !record.destination.isUnspecified else { continue }
            let index: Int
            if record.boundInterface > 0 {
                index = record.boundInterface
            } else {
                let query = SockDiagRouteQuery(family: record.family, destination: record.destination,
                                               source: record.source, uid: record.uid, mark: record.mark)
                guard let routed = uplink(query) else { continue }
                index = routed
            }
            if let prefixes = ownPrefixes[index], prefixes.contains(where: { $0.contains(record.destination, family: record.family) }) {
                continue
            }
            if info.segmentsIn != nil {
                var tally = StallTally(sent: segmentsSent, received: segmentsIn, retransmitted: retransmitted)
                if let timeouts = info.consecutiveTimeouts, timeouts >= Self.stuckTimeouts,
                   let silence = info.lastAckReceivedMs, silence >= Self.stuckSilenceMs {
                    tally = StallTally(sent: min(retransmitted, segmentsSent), received: 0, retransmitted: retransmitted)
                }
                stalls.add(tally, uplink: index, uid: record.uid)
            }
            guard moved, let rtt = info.rttMicroseconds, rtt > 0 else { continue }
            let minRtt = info.minRttMicroseconds.flatMap { $0 == UInt32.max || $0 == 0 ? nil : Double($0) / 1000 }
            let sample = QualitySample(interfaceIndex: index, source: .passive, rttMs: Double(rtt) / 1000, minRttMs: minRtt,
                                       segmentsSent: segmentsSent,
                                       segmentsRetransmitted: retransmitted, bytesReceived: received)
            votes.add(sample, uid: record.uid)
        }
        previous = current
        return QualityDump(uptime: uptime, interval: interval, samples: votes.samples(), stalls: stalls.tallies())
    }
}
