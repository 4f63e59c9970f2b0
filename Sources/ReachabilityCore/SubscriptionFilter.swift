/// Which events one subscriber receives: all of them, or with `statusOnly` only those whose
/// `status`, `connectivity` or `primary` differ from what the subscriber was last sent.
public struct SubscriptionFilter: Sendable {
    public let statusOnly: Bool
    /// The status the subscriber was last sent (its view of the machine).
    public private(set) var lastSent: Status?

    /// - Parameter lastSent: what the subscriber already saw (when it resumes), if known.
    public init(statusOnly: Bool, lastSent: Status? = nil) {
        self.statusOnly = statusOnly
        self.lastSent = lastSent
    }

    /// Decides whether to send `event`, and remembers it when so. `initial` events, and anything
    /// when nothing was sent yet, always go out.
    public mutating func admit(_ event: ReachabilityEvent) -> Bool {
        if statusOnly, event.event == .reachabilityChanged, let lastSent,
           // Compared with what this subscriber saw, not with `previous`: several small changes
           // that add up to an essential one are still reported.
           !event.current.differsInEssentials(from: lastSent) {
            return false
        }
        lastSent = event.current
        return true
    }
}
