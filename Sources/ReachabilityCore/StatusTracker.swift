import FoundationEssentials

/// The monitor's event logic as a state machine (swift-service-lifecycle style): feed it each
/// new snapshot, it answers whether to emit an event. No I/O; the monitor performs the action.
public struct StatusTracker: Sendable {
    /// What the caller must do after an update.
    public enum Action: Equatable, Sendable {
        case none
        case emit(ReachabilityEvent)
    }

    public private(set) var snapshot: NetworkSnapshot
    public private(set) var status: Status
    /// The sequence number of the last emitted event (or of the initial state).
    public private(set) var sequence: Int

    /// - Parameter firstSequence: the sequence number of the initial state. A daemon starts it at
    ///   its start time in milliseconds, so numbers keep rising across restarts and a client that
    ///   resumes with a number from an earlier run is told to resync instead of being confused.
    public init(snapshot: NetworkSnapshot = NetworkSnapshot(), firstSequence: Int = 0, now: Date = Date()) {
        self.snapshot = snapshot
        self.status = Classifier.classify(snapshot, since: now, now: now)
        self.sequence = firstSequence
    }

    /// The current state as the `initial` event of a new subscription.
    public func initialEvent(reason: Reason = Reason(code: .initial), now: Date = Date()) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: now, event: .initial, reason: reason, previous: nil, current: status)
    }

    /// Takes a new snapshot. `reason` overrides the derived reason (e.g. `resync`, `configReloaded`).
    public mutating func update(_ newSnapshot: NetworkSnapshot, reason forcedReason: Reason? = nil, now: Date = Date()) -> Action {
        let oldSnapshot = snapshot
        snapshot = newSnapshot
        var candidate = Classifier.classify(newSnapshot, since: status.since, previous: status, now: now)
        let changes = candidate.changes(from: status)
        guard !changes.isEmpty else {
            // Keep `since` but carry the probe's fresh details (time, RTT, error text), which are
            // no event of their own.
            status = candidate
            return .none
        }
        candidate.since = now
        let focus = Set([status.primary?.name, candidate.primary?.name, status.vpn?.name, candidate.vpn?.name].compactMap { $0 })
        let reason = forcedReason
            ?? ReasonDeriver.reason(from: oldSnapshot, to: newSnapshot, focus: focus)
            ?? Reason(code: .resync)
        let previous = status
        status = candidate
        sequence += 1
        return .emit(ReachabilityEvent(sequence: sequence, timestamp: now, event: .reachabilityChanged,
                                       reason: reason, previous: previous, current: candidate, changes: changes))
    }
}
