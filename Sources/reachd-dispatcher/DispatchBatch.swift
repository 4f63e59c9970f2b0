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

/// Runs scripts one batch at a time and merges what arrives meanwhile (swift-service-lifecycle
/// style: the methods say what to do, the caller runs the scripts).
public struct ScriptBatchQueue: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        case none
        /// Run the scripts for this batch now, then call `finished()`.
        case run(DispatchBatch)
    }

    public private(set) var running: Bool = false
    /// Events waiting for the running batch to finish, merged.
    public private(set) var waiting: DispatchBatch?

    public init() {}

    public mutating func received(_ event: ReachabilityEvent) -> Action {
        if running {
            if waiting == nil { waiting = DispatchBatch(event) } else { waiting?.merge(event) }
            return .none
        }
        running = true
        return .run(DispatchBatch(event))
    }

    /// The running batch is done: the next one, if events came meanwhile.
    public mutating func finished() -> Action {
        guard let next = waiting else {
            running = false
            return .none
        }
        waiting = nil
        return .run(next)
    }
}
