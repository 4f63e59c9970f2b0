/// The last events the daemon sent, so a subscriber that reconnects with `Subscribe(after: N)`
/// gets exactly what it missed. A ring of fixed capacity; `Element` is whatever the server keeps
/// per event (the event and its encoded bytes).
public struct EventHistory<Element: Sendable>: Sendable {
    /// What a subscription that resumes after a sequence number starts with.
    public enum Resume: Equatable where Element: Equatable {
        /// Replay these events (possibly none: nothing was missed), then live ones.
        case replay([Element])
        /// The missed events are gone (or the number is from another run): start with an
        /// `initial` event with reason `resync`.
        case resync
    }

    public let capacity: Int
    /// The sequence number of the current state: the last appended event, or the initial state.
    public private(set) var sequence: Int
    private var ring: [(sequence: Int, element: Element)] = []
    private var head = 0

    /// - Parameter sequence: the sequence number of the state before any appended event.
    public init(capacity: Int, sequence: Int) {
        self.capacity = max(0, capacity)
        self.sequence = sequence
        ring.reserveCapacity(self.capacity)
    }

    public var count: Int { ring.count }

    /// The sequence number of the oldest kept event.
    public var oldestSequence: Int? { ring.isEmpty ? nil : ring[head].sequence }

    /// Records an event. Sequence numbers must rise; an event that does not follow the last one
    /// directly (the source skipped numbers) empties the history, since a replay across the gap
    /// would hide events.
    public mutating func append(_ element: Element, sequence newSequence: Int) {
        precondition(newSequence > sequence, "event sequence numbers must rise")
        if newSequence != sequence + 1 { ring.removeAll(keepingCapacity: true); head = 0 }
        sequence = newSequence
        guard capacity > 0 else { return }
        if ring.count < capacity {
            ring.append((newSequence, element))
        } else {
            ring[head] = (newSequence, element)
            head = (head + 1) % capacity
        }
    }

    /// Starts over at `sequence` (the source restarted its numbering): nothing can be replayed
    /// across this point.
    public mutating func reset(sequence newSequence: Int) {
        ring.removeAll(keepingCapacity: true); head = 0
        sequence = newSequence
    }

    /// The kept events in order, oldest first.
    public var elements: [Element] {
        (0..<ring.count).map { ring[(head + $0) % ring.count].element }
    }

    /// What a subscriber that last saw `after` gets.
    public func resume(after: Int) -> Resume where Element: Equatable {
        switch resumePlan(after: after) {
        case .some(let elements): return .replay(elements)
        case .none: return .resync
        }
    }

    /// The events after `after`, or nil when they cannot all be replayed (`resync`).
    public func resumePlan(after: Int) -> [Element]? {
        if after == sequence { return [] }
        guard after < sequence, let oldest = oldestSequence, after >= oldest - 1 else { return nil }
        let skip = after - (oldest - 1)
        return Array(elements.dropFirst(skip))
    }
}
