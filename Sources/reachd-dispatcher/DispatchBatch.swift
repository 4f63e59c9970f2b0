import FoundationEssentials
import ReachabilityCore

/// What one run of the dispatcher scripts stands for: one event, or several that arrived while
/// the scripts were still running for an earlier one, merged so that the run sees the latest
/// state, the state the previous run saw, and how many events it stands for.
public struct DispatchBatch: Equatable, Sendable {
    /// The merged event: the last event's sequence number, time, kind and reason, the first
    /// one's `previous`, the last one's `current`, and every field any of them changed.
    public private(set) var event: ReachabilityEvent
    /// How many events were merged (1 for a single event).
    public private(set) var count: Int

    public init(_ event: ReachabilityEvent) {
        self.event = event
        self.count = 1
    }

    /// Merges a later event in.
    public mutating func merge(_ later: ReachabilityEvent) {
        let changes = Set(event.changes).union(later.changes).sorted()
        let kind: ReachabilityEvent.Kind = event.previous == nil && later.event == .initial ? .initial : .reachabilityChanged
        var merged = ReachabilityEvent(sequence: later.sequence, timestamp: later.timestamp, event: kind,
                                       reason: later.reason, previous: event.previous, current: later.current, changes: [])
        merged.changes = changes
        event = merged
        count += 1
    }
}
