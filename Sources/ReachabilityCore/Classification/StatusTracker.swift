import FoundationEssentials

/// The monitor's event logic as a state machine (swift-service-lifecycle style): feed it each
/// new snapshot, it answers whether to emit an event. No I/O; the monitor performs the action.
public struct StatusTracker: Sendable {
    /// What the caller must do after an update.
    public enum Action: Equatable, Sendable {
        case none
        case emit(ReachabilityEvent)
    }

    /// The picture the status was classified from, by interface index.
    public private(set) var indexed: IndexedSnapshot
    /// The newest status: the last event's, with the figures that changed since without making
    /// an event (the probe's time and RTT, the links' measured RTT).
    public private(set) var status: Status
    /// The status of the last event (or the initial state): the next event's `previous` and
    /// what a new subscription starts from, so that every event follows the one before it.
    public private(set) var published: Status
    /// The sequence number of the last emitted event (or of the initial state).
    public private(set) var sequence: Int

    /// The picture the status was classified from.
    public var snapshot: NetworkSnapshot { indexed.snapshot }

    /// - Parameter firstSequence: the sequence number of the initial state. A daemon starts it at
    ///   its start time in milliseconds, so numbers keep rising across restarts and a client that
    ///   resumes with a number from an earlier run is told to resync instead of being confused.
    public init(snapshot: NetworkSnapshot = NetworkSnapshot(), firstSequence: Int = 0, now: Date) {
        self.indexed = IndexedSnapshot(snapshot)
        self.status = Classifier.classify(indexed, since: now, now: now)
        self.published = status
        self.sequence = firstSequence
    }

    /// The current state as the `initial` event of a new subscription.
    public func initialEvent(reason: Reason = Reason(code: .initial), now: Date) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: now, event: .initial, reason: reason, previous: nil, current: published)
    }

    /// The newest status becomes the published one without an event: for the initial state,
    /// before anyone saw it (the technologies' guesses taken right after the first reading).
    public mutating func publishQuietly() {
        published = status
    }

    /// The uplinks' newest measured qualities, for the next classification.
    public mutating func takeLinkQualities(_ qualities: [Int: LinkQuality], measuring: Bool = true) {
        indexed.linkQualities = qualities
        indexed.measuresQuality = measuring
    }

    /// The data stalls suspected now, for the next classification.
    public mutating func takeDataStalls(_ stalls: [Int: DataStall]) {
        indexed.dataStalls = stalls
    }

    /// Takes a new snapshot. `reason` overrides the derived reason (e.g. `resync`, `configReloaded`).
    public mutating func update(_ newSnapshot: NetworkSnapshot, reason forcedReason: Reason? = nil, now: Date) -> Action {
        let old = indexed
        indexed = IndexedSnapshot(newSnapshot)
        let new = indexed
        return evaluate(reason: forcedReason, now: now) { ReasonDeriver.reason(from: old, to: new, focusing: $0) }
    }

    /// Takes what changed since the last update: the slices of the indexes that changed (each
    /// replacing the one at its index), and the modems, the checker's verdict and the standby
    /// uplinks' verdicts when they did.
    /// Gives what `update(_:)` gives for the whole new snapshot, with work that grows with the
    /// links and what changed rather than with every address and route.
    public mutating func update(slices: [LinkSlice], modems: [ModemState]? = nil, wifi: [WiFiDevice]? = nil,
                                verdict: (probe: Probe?, path: ProbePath?)? = nil, rules: [RoutingRule]? = nil,
                                standbyVerdicts: [Int: Probe]? = nil, reason forcedReason: Reason? = nil, now: Date) -> Action {
        var pairs: [(old: LinkSlice, new: LinkSlice)] = []
        pairs.reserveCapacity(slices.count)
        for slice in slices { pairs.append((indexed.replace(slice), slice)) }
        // The path is compared only when a verdict came: not copied otherwise.
        let oldModems = indexed.modems, oldProbe = indexed.probe, oldRules = indexed.rules
        let oldPath = verdict == nil ? nil : indexed.probePath
        if let modems { indexed.modems = modems }
        if let wifi { indexed.wifi = wifi }
        if let rules { indexed.rules = rules }
        let ruleChange = oldRules == indexed.rules ? nil : (old: oldRules, new: indexed.rules)
        if let verdict { indexed.probe = verdict.probe; indexed.probePath = verdict.path }
        if let standbyVerdicts { indexed.standbyVerdicts = standbyVerdicts }
        let newModems = indexed.modems, newProbe = indexed.probe
        let verdictMoved = verdict != nil && oldPath != indexed.probePath
        return evaluate(reason: forcedReason, now: now) {
            ReasonDeriver.reason(slices: pairs, modemsChanged: oldModems != newModems, oldProbe: oldProbe,
                                 newProbe: newProbe, verdictMoved: verdictMoved, rules: ruleChange, focusing: $0)
        }
    }

    /// A refusing route or rule that newly decides a path of a status that is not reachable: the
    /// reason names it rather than the route or rule change that let it win.
    static func killSwitch(from old: Status, to new: Status) -> Reason? {
        guard !new.reachable else { return nil }
        for path in new.routing where !old.routing.contains(path) {
            switch path.result {
            case .unreachable, .blackhole, .prohibit:
                return Reason(code: .killSwitch, detail: "\(path.family.rawValue) \(path.result.rawValue) route, \(path.decidedBy)")
            case .route, .none:
                continue
            }
        }
        return nil
    }

    /// A class of measured quality that moved when nothing in the kernel, the modems or the
    /// verdict explains the event (a check's RTT, a radio's signal, a passive dump): reason
    /// `qualityChanged` with the uplink, the path's (`linkQuality`) or a standby's (`interfaces`).
    static func qualityChange(_ changes: [Status.Field], from old: Status, to new: Status) -> Reason? {
        if changes.contains(.linkQuality) {
            let path = [new.vpn, new.primary, old.vpn, old.primary].lazy.compactMap { $0 }
            let measured = path.first { $0.linkQuality != nil } ?? path.first
            return Reason(code: .qualityChanged, interface: measured?.name)
        }
        guard changes.contains(.interfaces) else { return nil }
        let path = [new.primary?.index, new.vpn?.index, old.primary?.index, old.vpn?.index]
        for interface in new.interfaces where !path.contains(interface.index) {
            let before = old.interfaces.first { $0.index == interface.index }
            if LinkQuality.differsAsShown(before?.linkQuality, interface.linkQuality) {
                return Reason(code: .qualityChanged, interface: interface.name)
            }
        }
        return nil
    }

    /// Classifies `indexed` and decides; `derive` gives the reason for the interfaces in focus,
    /// asked only when there is an event.
    private mutating func evaluate(reason forcedReason: Reason?, now: Date, derive: ([String]) -> Reason?) -> Action {
        var candidate = Classifier.classify(indexed, since: status.since, previous: status, now: now)
        // Against what subscribers saw: `status` differs from it only in figures that make no
        // event, so the changes are the same, and the event follows the one before it.
        let changes = candidate.changes(from: published)
        guard !changes.isEmpty else {
            // Keep `since` but carry the probe's fresh details (time, RTT, error text) and the
            // links' measured figures, which are no event of their own.
            status = candidate
            return .none
        }
        candidate.since = now
        // At most four names: a list to search, not a set to hash.
        let focus = [status.primary?.name, candidate.primary?.name, status.vpn?.name, candidate.vpn?.name].compactMap { $0 }
        let reason = forcedReason ?? Self.killSwitch(from: status, to: candidate) ?? derive(focus)
            ?? Self.qualityChange(changes, from: published, to: candidate) ?? Reason(code: .resync)
        let previous = published
        status = candidate
        published = candidate
        sequence += 1
        return .emit(ReachabilityEvent(sequence: sequence, timestamp: now, event: .reachabilityChanged,
                                       reason: reason, previous: previous, current: candidate, changes: changes))
    }
}
