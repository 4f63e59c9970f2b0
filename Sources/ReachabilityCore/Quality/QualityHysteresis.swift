import FoundationEssentials

/// One figure's class held against noise (`LinkQualityEstimator`). `Value` orders worst first.
///
/// - Worse: when the last `worseAfter` evaluations were all beyond the threshold by the
///   margin (their `optimistic` classes all below `current`), to the best of those classes.
/// - Better: to the best class every evaluation of the last `betterAfter` seconds reached
///   within the threshold by the margin (`pessimistic`).
/// - A change back the other way waits `reversalHold` seconds after the last change: traffic
///   whose RTT alternates in step with the dumps looks like a link that keeps changing, and
///   this is what keeps it to one change a minute.
///
/// The windows depend on the evaluations alone, so a history that is worse at every evaluation
/// never holds a better class (without the reversal hold, which may keep a class a little longer).
struct QualityHysteresis<Value: Comparable & Hashable & CaseIterable & Sendable>: Sendable {
    private(set) var current: Value
    /// The `optimistic` classes of the last evaluations, newest last.
    private var recent: [Value] = []
    /// For each class, since when (uptime) every evaluation's `pessimistic` class reached it.
    private var reachedSince: [Value: TimeInterval] = [:]
    /// The last change: when, and whether it was for the worse.
    private var lastChange: (uptime: TimeInterval, worse: Bool)?

    init(_ value: Value) { current = value }

    /// One evaluation at `now`: `optimistic` is the class with the margin in the figure's
    /// favour, `pessimistic` with it against. True when `current` changed.
    mutating func update(optimistic: Value, pessimistic: Value, now: TimeInterval, worseAfter: Int,
                         betterAfter: TimeInterval, reversalHold: TimeInterval) -> Bool {
        recent.append(optimistic)
        if recent.count > max(worseAfter, 1) { recent.removeFirst(recent.count - max(worseAfter, 1)) }
        var best: Value?
        for value in Value.allCases {
            if pessimistic >= value {
                let since = reachedSince[value] ?? now
                reachedSince[value] = since
                if now - since >= betterAfter, best.map({ value > $0 }) ?? true { best = value }
            } else {
                reachedSince[value] = nil
            }
        }
        if recent.count >= max(worseAfter, 1), let worse = recent.max(), worse < current, allowed(worse: true, now: now, reversalHold) {
            current = worse
            lastChange = (now, true)
            return true
        }
        if let best, best > current, allowed(worse: false, now: now, reversalHold) {
            current = best
            lastChange = (now, false)
            return true
        }
        return false
    }

    private func allowed(worse: Bool, now: TimeInterval, _ hold: TimeInterval) -> Bool {
        guard let lastChange, lastChange.worse != worse else { return true }
        return now - lastChange.uptime >= hold
    }
}
