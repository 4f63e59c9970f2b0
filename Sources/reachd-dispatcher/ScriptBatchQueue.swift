import ReachabilityCore

/// Runs scripts one batch at a time, at most once per `minimumInterval` (start to start), and
/// merges what arrives meanwhile into the next batch (swift-service-lifecycle style: the methods
/// say what to do, the caller runs the scripts and keeps the timer; the clock is the caller's,
/// any monotonic seconds).
///
/// Whatever the rate of events, runs start at least `minimumInterval` apart, and the last event
/// is never lost: after the interval, the merged batch of everything that came runs.
public struct ScriptBatchQueue: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        case none
        /// Run the scripts for this batch now, then call `finished(now:)`.
        case run(DispatchBatch)
        /// A batch waits for the interval to pass: call `deadlinePassed(now:)` at `at`.
        case wake(at: Double)
    }

    /// `[Dispatcher] MinIntervalSec=`: the least time between the starts of two runs.
    public let minimumInterval: Double
    public private(set) var running: Bool = false
    /// Events waiting for the running batch to finish, or for the interval to pass, merged.
    public private(set) var waiting: DispatchBatch?
    /// When the last batch started.
    public private(set) var lastStart: Double?
    /// The wake-up asked for and not yet reported, so that a flood asks for one timer, not one
    /// per event.
    private var wakeAt: Double?

    public init(minimumInterval: Double = 0) {
        self.minimumInterval = max(0, minimumInterval)
    }

    /// Nothing running and nothing waiting.
    public var isIdle: Bool { !running && waiting == nil }

    public mutating func received(_ event: ReachabilityEvent, now: Double) -> Action {
        if waiting == nil { waiting = DispatchBatch(event) } else { waiting?.merge(event) }
        return next(now: now)
    }

    /// The running batch is done: the next one, now or after the interval, if events came meanwhile.
    public mutating func finished(now: Double) -> Action {
        running = false
        return next(now: now)
    }

    /// The wake-up asked for with `.wake(at:)` is due.
    public mutating func deadlinePassed(now: Double) -> Action {
        wakeAt = nil
        return next(now: now)
    }

    private mutating func next(now: Double) -> Action {
        guard !running, let batch = waiting else { return .none }
        let earliest = lastStart.map { $0 + minimumInterval } ?? now
        guard now >= earliest else {
            // One timer at a time; a stale one that fires early only asks again.
            if wakeAt != nil { return .none }
            wakeAt = earliest
            return .wake(at: earliest)
        }
        waiting = nil
        running = true
        lastStart = now
        wakeAt = nil
        return .run(batch)
    }
}
