import FoundationEssentials

/// The evidence that an uplink's traffic goes unanswered (varlink type `DataStall`,
/// `Interface.stall`): what the apps' own TCP sockets showed when the stall was suspected. The
/// figures are those of that moment; the newest dumps are in `reachctl status --verbose`.
public struct DataStall: Codable, Equatable, Hashable, Sendable {
    /// How the stall was seen.
    public enum Method: String, Codable, Sendable, CaseIterable {
        /// The apps' TCP sockets sent and retransmitted, and nothing came back (sock_diag).
        case tcp
    }

    /// When the stall was first suspected.
    public var since: Date
    public var method: Method
    /// Of the segments sent since the last one received, the share that were retransmissions (0…1).
    public var failRate: Double
    /// Segments the apps sent over the uplink since the last segment it received.
    public var sentSinceReceive: Int
    /// Milliseconds between the two dumps that showed it.
    public var periodMs: Int
    /// The last few dumps of the uplink up to the suspicion, oldest first: the evidence.
    public var recent: [Dump]

    /// One sock_diag dump of the uplink (varlink type `DataStallDump`).
    public struct Dump: Codable, Equatable, Hashable, Sendable {
        public var at: Date
        public var periodMs: Int
        /// Segments sent (retransmissions included), received and retransmitted since the dump before.
        public var sent: Int
        public var received: Int
        public var retransmitted: Int

        public init(at: Date, periodMs: Int, sent: Int, received: Int, retransmitted: Int) {
            self.at = at; self.periodMs = periodMs; self.sent = sent; self.received = received; self.retransmitted = retransmitted
        }

        enum CodingKeys: String, CodingKey { case at, periodMs, sent, received, retransmitted }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(at: try c.decodeTimestamp(forKey: .at), periodMs: try c.decode(Int.self, forKey: .periodMs),
                      sent: try c.decode(Int.self, forKey: .sent), received: try c.decode(Int.self, forKey: .received),
                      retransmitted: try c.decode(Int.self, forKey: .retransmitted))
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(Timestamp.string(from: at), forKey: .at); try c.encode(periodMs, forKey: .periodMs)
            try c.encode(sent, forKey: .sent); try c.encode(received, forKey: .received)
            try c.encode(retransmitted, forKey: .retransmitted)
        }
    }

    public init(since: Date, method: Method, failRate: Double, sentSinceReceive: Int, periodMs: Int, recent: [Dump] = []) {
        self.since = since; self.method = method; self.failRate = failRate
        self.sentSinceReceive = sentSinceReceive; self.periodMs = periodMs; self.recent = recent
    }

    enum CodingKeys: String, CodingKey { case since, method, failRate, sentSinceReceive, periodMs, recent }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(since: try c.decodeTimestamp(forKey: .since), method: try c.decode(Method.self, forKey: .method),
                  failRate: try c.decode(Double.self, forKey: .failRate),
                  sentSinceReceive: try c.decode(Int.self, forKey: .sentSinceReceive),
                  periodMs: try c.decode(Int.self, forKey: .periodMs),
                  recent: try c.decodeIfPresent([Dump].self, forKey: .recent) ?? [])
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Timestamp.string(from: since), forKey: .since)
        try c.encode(method, forKey: .method); try c.encode(failRate, forKey: .failRate)
        try c.encode(sentSinceReceive, forKey: .sentSinceReceive); try c.encode(periodMs, forKey: .periodMs)
        try c.encode(recent, forKey: .recent)
    }
}

extension DataStall {
    /// `stalled (tcp, 96 % retransmitted)`.
    public var summary: String {
        "stalled (\(method.rawValue), \(Self.percent(failRate)) % retransmitted)"
    }

    /// `stalled 12 s (tcp, 96 % retransmitted)`: how long, as of `now`.
    public func summary(now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(since).rounded(.down)))
        return "stalled \(seconds) s (\(method.rawValue), \(Self.percent(failRate)) % retransmitted)"
    }

    /// A share as a whole percentage, 0…100 (anything not a number reads as 0).
    static func percent(_ share: Double) -> Int {
        guard share.isFinite else { return 0 }
        return Int((min(max(share, 0), 1) * 100).rounded())
    }
}
