/// A token bucket for log lines: `burst` lines at once, then one per `interval` seconds; what is
/// held back is counted and reported with the next line let through. One per connection keeps
/// a client that misbehaves on purpose from filling the journal.
public struct LogRateLimiter: Sendable {
    public let burst: Double
    public let interval: Double
    private var tokens: Double
    private var last: Double?
    /// Lines held back since the last one let through.
    public private(set) var suppressed = 0

    public init(burst: Int = 5, interval: Double = 1) {
        self.burst = Double(max(burst, 1))
        self.interval = max(interval, 0.001)
        tokens = self.burst
    }

    /// Whether a line may be logged at `now` (seconds on any monotonic clock); when it may,
    /// the number of lines held back before it (and the count starts again).
    public mutating func admit(now: Double) -> (allowed: Bool, suppressedBefore: Int) {
        if let last, now > last { tokens = min(burst, tokens + (now - last) / interval) }
        last = max(last ?? now, now)
        guard tokens >= 1 else {
            suppressed += 1
            return (false, 0)
        }
        tokens -= 1
        defer { suppressed = 0 }
        return (true, suppressed)
    }
}
