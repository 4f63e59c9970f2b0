/// What the apps' TCP sockets did over one uplink between two sock_diag dumps: segments sent
/// (retransmissions included), received, and retransmitted. The data-stall detector's input.
public struct StallTally: Equatable, Hashable, Sendable {
    public var sent: UInt64
    public var received: UInt64
    public var retransmitted: UInt64

    public init(sent: UInt64 = 0, received: UInt64 = 0, retransmitted: UInt64 = 0) {
        self.sent = sent; self.received = received; self.retransmitted = retransmitted
    }

    /// Retransmitted over sent (0…1); 0 when nothing was sent.
    public var failRate: Double {
        sent == 0 ? 0 : Double(min(retransmitted, sent)) / Double(sent)
    }

    mutating func add(sent: UInt64, received: UInt64, retransmitted: UInt64) {
        self.sent &+= sent
        self.received &+= received
        self.retransmitted &+= retransmitted
    }
}

/// Turns the sockets of one dump into one `StallTally` per uplink, each user one vote, as
/// `PerUserSampleReduction` does for quality: a user whose own connections go to a dead host
/// (or who opens a thousand of them) does not make the uplink look stalled for everyone.
///
/// Each user's sockets on an uplink are summed; the uplink's sent and retransmitted are the
/// median user's by fail rate (with an even number of users, the better of the two middle
/// ones), while its received is everyone's: any segment that came back over the uplink shows
/// that it carries traffic, and vetoes a stall. Pure: no I/O.
public struct StallTallyReduction: Sendable {
    private var users: [PerUserSampleReduction.Key: StallTally] = [:]

    public init() {}

    /// Adds one socket's counts since the last dump, on `uplink`, owned by `uid`.
    public mutating func add(_ tally: StallTally, uplink: Int, uid: UInt32) {
        // One look-up, the sum made in place. A socket cannot have retransmitted more than it sent.
        users[PerUserSampleReduction.Key(uplink: uplink, uid: uid), default: StallTally()]
            .add(sent: tally.sent, received: tally.received, retransmitted: min(tally.retransmitted, tally.sent))
    }

    /// One tally per uplink that any socket moved on.
    public func tallies() -> [Int: StallTally] {
        var byUplink: [Int: [StallTally]] = [:]
        for (key, tally) in users { byUplink[key.uplink, default: []].append(tally) }
        return byUplink.mapValues { votes in
            let received = votes.reduce(UInt64(0)) { $0 &+ $1.received }
            // Only users who sent anything vote on the fail rate.
            let voters = votes.filter { $0.sent > 0 }.sorted {
                ($0.failRate, $1.sent) < ($1.failRate, $0.sent)
            }
            guard !voters.isEmpty else { return StallTally(received: received) }
            let median = voters[(voters.count - 1) / 2]
            return StallTally(sent: median.sent, received: received, retransmitted: median.retransmitted)
        }
    }
}
