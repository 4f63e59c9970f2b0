import FoundationEssentials

/// Tells, from the apps' own TCP traffic, when an uplink whose link is up carries nothing back
/// (a data stall), as Android's NetworkMonitor does; a state machine whose event methods return
/// what the monitor does. Pure: no I/O, no clock of its own.
///
/// Per uplink, per sock_diag dump (`StallTally`, each user one vote): the segments sent and
/// retransmitted are added up since the uplink last received a segment. A stall is suspected
/// when at least `minimumSegments` were sent since then and at least `failRate` of them were
/// retransmissions; any segment received vetoes it and starts the count afresh. A suspicion
/// only asks for the uplink to be checked (`recheck`): the check's verdict, not the traffic,
/// moves its connectivity.
///
/// - An uplink is judged from its second dump as an uplink on (the first only learns it: a
///   link that is being set up says nothing yet), and forgotten when it is no longer one.
/// - A suspected stall is checked at once; while it lasts, again after 30 s, doubling up to
///   300 s. On an expensive uplink, never two checks within `expensiveRecheckInterval` (60 s):
///   a check that is due then waits for the first dump after it.
/// - A check that finds the uplink working (`full`) refutes the suspicion: the stall is
///   cleared and not suspected again (nor checked) until a segment is received and the count
///   starts afresh — a dead server beside an idle uplink costs one check, not one a minute.
/// - Traffic answered again clears the stall and checks the uplink again.
public struct DataStallDetector: Sendable {
    /// `[DataStall]`: Android's defaults.
    public struct Configuration: Equatable, Sendable {
        /// `Enabled=`.
        public var enabled = true
        /// `MinimumSegments=`: segments sent since the last one received before a stall can be suspected.
        public var minimumSegments = 10
        /// `FailRate=`: the share of those that were retransmissions (0…1).
        public var failRate = 0.8
        /// Seconds before a lasting stall is checked again; doubles each time, up to `maximumRecheckInterval`.
        public var firstRecheckInterval: TimeInterval = 30
        public var maximumRecheckInterval: TimeInterval = 300
        /// `ExpensiveRecheckInterval=`: the least time between two checks of an expensive uplink.
        public var expensiveRecheckInterval: TimeInterval = 60

        public init() {}
    }

    /// An uplink as the status shows it at a dump.
    public struct Uplink: Equatable, Sendable {
        public var index: Int
        public var expensive: Bool

        public init(index: Int, expensive: Bool) {
            self.index = index; self.expensive = expensive
        }
    }

    /// What the monitor does.
    public enum Decision: Equatable, Sendable {
        /// Show the stall on the uplink (`Interface.stall`).
        case suspected(index: Int, DataStall)
        /// The uplink's stall is over: its traffic is answered, the check found it working, or
        /// it is no longer an uplink.
        case cleared(index: Int)
        /// Check the uplink now.
        case recheck(index: Int)
    }

    /// One dump of one uplink, for `reachctl status --verbose`.
    public struct Evidence: Equatable, Sendable {
        /// When the dump was read (wall clock).
        public var at: Date
        public var periodMs: Int
        public var tally: StallTally
        /// Segments sent since the last one received, after this dump.
        public var sentSinceReceive: UInt64

        /// As `DataStall.recent` shows it.
        var dump: DataStall.Dump {
            DataStall.Dump(at: at, periodMs: periodMs, sent: Int(clamping: tally.sent), received: Int(clamping: tally.received),
                           retransmitted: Int(clamping: tally.retransmitted))
        }
    }

    private struct State: Sendable {
        var sentSinceReceive: UInt64 = 0
        var retransmittedSinceReceive: UInt64 = 0
        var stall: DataStall?
        /// When the stall was suspected (uptime): a check begun before says nothing of it.
        var suspectedAt: TimeInterval = 0
        /// A check found the uplink working since the count began.
        var refuted = false
        var lastRecheck: TimeInterval?
        var nextRecheck: TimeInterval?
        var backoff: TimeInterval?
        /// A check is wanted but an expensive uplink's interval has not passed.
        var recheckDue = false
        var evidence: [Evidence] = []
    }

    /// Dumps of evidence kept per uplink.
    public static let evidenceKept = 6

    public var configuration: Configuration
    private var uplinks: [Int: State] = [:]

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The stalls suspected now, by uplink index.
    public var stalls: [Int: DataStall] {
        uplinks.compactMapValues(\.stall)
    }

    /// The last few dumps of uplink `index`, oldest first.
    public func evidence(_ index: Int) -> [Evidence] {
        uplinks[index]?.evidence ?? []
    }

    /// Forgets everything (a sleep, the detector turned off): every uplink is learned afresh.
    public mutating func reset() -> [Decision] {
        let cleared = uplinks.filter { $0.value.stall != nil }.keys.sorted().map { Decision.cleared(index: $0) }
        uplinks = [:]
        return cleared
    }

    /// One dump: `tallies` by uplink index, `uplinks` the uplinks the status shows now,
    /// `interval` seconds since the previous dump (nil: the first, which only learns).
    public mutating func dumped(_ tallies: [Int: StallTally], uplinks current: [Uplink], interval: TimeInterval?,
                                now: ClockReading) -> [Decision] {
        guard configuration.enabled else { return reset() }
        var decisions: [Decision] = []
        let wanted = Set(current.map(\.index))
        for index in uplinks.keys.sorted() where !wanted.contains(index) {
            if uplinks.removeValue(forKey: index)?.stall != nil { decisions.append(.cleared(index: index)) }
        }
        for uplink in current {
            guard var state = uplinks[uplink.index], let interval else {
                // New here: only learned.
                uplinks[uplink.index] = uplinks[uplink.index] ?? State()
                continue
            }
            defer { uplinks[uplink.index] = state }
            let tally = tallies[uplink.index] ?? StallTally()
            let periodMs = Int((interval * 1000).rounded())
            if tally.received > 0 {
                state.sentSinceReceive = 0
                state.retransmittedSinceReceive = 0
                state.refuted = false
                state.backoff = nil
                state.nextRecheck = nil
                if state.stall != nil {
                    state.stall = nil
                    decisions.append(.cleared(index: uplink.index))
                    state.recheckDue = true
                }
            } else {
                state.sentSinceReceive &+= tally.sent
                state.retransmittedSinceReceive &+= min(tally.retransmitted, tally.sent)
            }
            state.evidence.append(Evidence(at: now.wall, periodMs: periodMs, tally: tally, sentSinceReceive: state.sentSinceReceive))
            if state.evidence.count > Self.evidenceKept { state.evidence.removeFirst(state.evidence.count - Self.evidenceKept) }

            if suspects(state), !state.refuted {
                if state.stall == nil {
                    let rate = Double(state.retransmittedSinceReceive) / Double(state.sentSinceReceive)
                    let stall = DataStall(since: now.wall, method: .tcp, failRate: rate,
                                          sentSinceReceive: Int(clamping: state.sentSinceReceive), periodMs: periodMs,
                                          recent: state.evidence.map(\.dump))
                    state.stall = stall
                    state.suspectedAt = now.uptime
                    decisions.append(.suspected(index: uplink.index, stall))
                    state.recheckDue = true
                    state.backoff = configuration.firstRecheckInterval
                    state.nextRecheck = nil
                } else if let next = state.nextRecheck, now.uptime >= next {
                    state.recheckDue = true
                }
            }
            if state.recheckDue, allowed(state, expensive: uplink.expensive, now: now) {
                state.recheckDue = false
                state.lastRecheck = now.uptime
                if state.stall != nil, let backoff = state.backoff {
                    state.nextRecheck = now.uptime + backoff
                    state.backoff = min(backoff * 2, configuration.maximumRecheckInterval)
                }
                decisions.append(.recheck(index: uplink.index))
            }
        }
        return decisions
    }

    /// A check of uplink `index` that began at `began` (uptime) answered `connectivity`. `full`
    /// from a check begun after the stall was suspected refutes it.
    public mutating func checked(index: Int, connectivity: Connectivity, began: TimeInterval) -> [Decision] {
        guard var state = uplinks[index], state.stall != nil, began >= state.suspectedAt else { return [] }
        switch connectivity {
        case .full:
            state.stall = nil
            state.refuted = true
            state.recheckDue = false
            state.nextRecheck = nil
            state.backoff = nil
            uplinks[index] = state
            return [.cleared(index: index)]
        case .unknown, .none, .portal, .limited:
            return []
        }
    }

    private func suspects(_ state: State) -> Bool {
        state.sentSinceReceive >= UInt64(max(configuration.minimumSegments, 1))
            && Double(state.retransmittedSinceReceive) >= configuration.failRate * Double(state.sentSinceReceive)
    }

    private func allowed(_ state: State, expensive: Bool, now: ClockReading) -> Bool {
        guard expensive, let last = state.lastRecheck else { return true }
        return now.uptime - last >= configuration.expensiveRecheckInterval
    }
}
