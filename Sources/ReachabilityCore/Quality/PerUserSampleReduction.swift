/// Turns the samples of one dump's sockets into one sample per uplink, each user one vote.
///
/// The sockets of a dump are everyone's: a user who opens a thousand connections to a slow host
/// (or one connection through a lossy path to a host of their own) says nothing about the uplink
/// that an app's working connection does not contradict. So the sockets of one user (`uid`) on
/// one uplink are reduced to that user's vote, whether they are bound to the device or routed
/// out of it: the median of their RTTs and their own loss (segments retransmitted over segments
/// sent, all their sockets together). The uplink's sample is then the median of the votes, for
/// RTT and for loss each on its own. With an even number of votes it is the better of the two
/// middle ones: traffic that works shows that the link works, while a slow or lossy path may be
/// the far host's own.
///
/// A vote is one element, never an average: the sample's loss is the counts of the user whose
/// ratio is the median (so `minimumSegmentsForLoss` weighs that user's traffic, not the others'),
/// its RTT that user's median socket. The lowest RTT is the lowest of all sockets and the bytes
/// received the sum of all: both are what the link did carry, whoever asked. Pure: no I/O.
public struct PerUserSampleReduction: Sendable {
    /// One user's sockets on one uplink.
    struct Ballot: Sendable {
        var rtts: [Double] = []
        var sent: UInt64 = 0
        var retransmitted: UInt64 = 0
        var sentAny = false

        mutating func add(_ sample: QualitySample) {
            if sample.rttMs.isFinite && sample.rttMs > 0 { rtts.append(sample.rttMs) }
            guard let segments = sample.segmentsSent else { return }
            sentAny = true
            sent &+= segments
            // A socket cannot lose more than it sent (the estimator caps each sample the same way).
            retransmitted &+= min(sample.segmentsRetransmitted ?? 0, segments)
        }
    }

    struct Key: Hashable, Sendable {
        var uplink: Int
        var uid: UInt32
    }

    /// What the uplink's sockets carried, whoever owns them.
    struct Carried: Sendable {
        var minRttMs: Double?
        var bytesReceived: UInt64?
    }

    private var ballots: [Key: Ballot] = [:]
    private var carried: [Int: Carried] = [:]

    public init() {}

    /// No sample was added.
    public var isEmpty: Bool { ballots.isEmpty }

    /// Adds one socket's sample (`interfaceIndex`: the uplink it votes for), of a socket that
    /// `uid` owns. An RTT that is not a positive number counts for nothing but its counters.
    public mutating func add(_ sample: QualitySample, uid: UInt32) {
        ballots[Key(uplink: sample.interfaceIndex, uid: uid), default: Ballot()].add(sample)
        var carriedHere = carried[sample.interfaceIndex] ?? Carried()
        if let minRtt = sample.minRttMs, minRtt.isFinite, minRtt > 0 {
            carriedHere.minRttMs = Swift.min(carriedHere.minRttMs ?? minRtt, minRtt)
        }
        if let bytes = sample.bytesReceived { carriedHere.bytesReceived = (carriedHere.bytesReceived ?? 0) &+ bytes }
        carried[sample.interfaceIndex] = carriedHere
    }

    /// One `.passive` sample for each uplink with at least one RTT among its votes.
    public func samples() -> [Int: [QualitySample]] {
        var byUplink: [Int: [(uid: UInt32, ballot: Ballot)]] = [:]
        for (key, ballot) in ballots { byUplink[key.uplink, default: []].append((key.uid, ballot)) }
        var result: [Int: [QualitySample]] = [:]
        for (uplink, votes) in byUplink {
            // The users' own medians, then the median of those.
            let rtts = votes.compactMap { vote in Self.betterMedian(vote.ballot.rtts.sorted()) }.sorted()
            guard let rtt = Self.betterMedian(rtts) else { continue }
            // Users by their loss ratio, a.retransmitted / a.sent < b.retransmitted / b.sent
            // without division; equal ratios by uid, so that the counts taken never depend on
            // the order the kernel listed the sockets in.
            let senders = votes.filter { $0.ballot.sent > 0 }.sorted { a, b in
                let left = a.ballot.retransmitted.multipliedFullWidth(by: b.ballot.sent)
                let right = b.ballot.retransmitted.multipliedFullWidth(by: a.ballot.sent)
                if left.high != right.high { return left.high < right.high }
                if left.low != right.low { return left.low < right.low }
                return a.uid < b.uid
            }
            let sent: UInt64?, retransmitted: UInt64?
            if let median = Self.betterMedian(senders) {
                sent = median.ballot.sent; retransmitted = median.ballot.retransmitted
            } else if votes.contains(where: \.ballot.sentAny) {
                sent = 0; retransmitted = 0
            } else {
                sent = nil; retransmitted = nil
            }
            let here = carried[uplink] ?? Carried()
            result[uplink] = [QualitySample(interfaceIndex: uplink, source: .passive, rttMs: rtt, minRttMs: here.minRttMs,
                                            segmentsSent: sent, segmentsRetransmitted: retransmitted,
                                            bytesReceived: here.bytesReceived)]
        }
        return result
    }

    /// The samples of `sockets` (each with its owner), one per uplink.
    public static func reduce(_ sockets: [(uid: UInt32, sample: QualitySample)]) -> [Int: [QualitySample]] {
        var reduction = PerUserSampleReduction()
        for socket in sockets { reduction.add(socket.sample, uid: socket.uid) }
        return reduction.samples()
    }

    /// The median of `sorted` (best first), the better of the two middle ones when even; nil
    /// when empty.
    static func betterMedian<T>(_ sorted: [T]) -> T? {
        sorted.isEmpty ? nil : sorted[(sorted.count - 1) / 2]
    }
}
