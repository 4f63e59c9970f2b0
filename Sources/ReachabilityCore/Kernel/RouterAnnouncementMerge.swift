/// Decides when changes that come only from router advertisement options are classified: the
/// first on an interface at once, later ones on the same interface folded into about one
/// evaluation a `window` (anyone on the link can send advertisements at any rate; every
/// evaluation that changes the status is an event to every subscriber). A state machine in the
/// style of swift-service-lifecycle: each event method returns the action; the monitor performs it.
///
/// Any other change (link, address, route, rule, modem, verdict, reload) is never held back: the
/// monitor evaluates at once, which includes the announcements held, and says so with
/// `evaluated(now:)`. Pure: times are seconds of the monitor's monotonic clock, handed in.
public struct RouterAnnouncementMerge: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        /// Classify now.
        case evaluate
        /// Hold the change; arm the merge timer for this time (replacing an armed one) and call
        /// `timerFired(now:)` then.
        case hold(until: Double)
        /// Nothing to do (a timer with nothing held, or one that fired early).
        case none
    }

    /// Seconds between two evaluations for announcements of one interface.
    public let window: Double
    /// When announcements of each interface were last classified (kept for a window).
    private var lastEvaluated: [Int: Double] = [:]
    /// The interfaces whose announcements are held, and when each may be classified.
    public private(set) var held: [Int: Double] = [:]

    public init(window: Double = 1) {
        self.window = max(window, 0)
    }

    /// The earliest time a held change is due; nil when nothing is held.
    public var nextDeadline: Double? { held.values.min() }

    /// What routers announced changed on `indexes` (and nothing else did).
    public mutating func announced(_ indexes: Set<Int>, now: Double) -> Action {
        var due = false
        for index in indexes {
            if let last = lastEvaluated[index], now - last < window, now >= last {
                held[index] = min(held[index] ?? .infinity, last + window)
            } else {
                due = true
            }
        }
        if due { return .evaluate }
        return nextDeadline.map { .hold(until: $0) } ?? .none
    }

    /// The merge timer fired at `now`.
    public mutating func timerFired(now: Double) -> Action {
        guard let next = nextDeadline else { return .none }
        return next <= now ? .evaluate : .hold(until: next)
    }

    /// The monitor classified at `now`, for whatever reason: whatever was held went out with it.
    /// `indexes`: the interfaces whose announcements that evaluation included besides the held ones.
    public mutating func evaluated(_ indexes: Set<Int>, now: Double) {
        for index in indexes.union(held.keys) { lastEvaluated[index] = now }
        held = [:]
        if lastEvaluated.count > 64 {
            // Bounded: interfaces not announced on within a window start afresh anyway.
            lastEvaluated = lastEvaluated.filter { now - $0.value < window }
        }
    }
}
