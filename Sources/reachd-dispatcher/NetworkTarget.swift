import ReachabilityCore

/// The systemd targets the dispatcher starts while a condition on the status holds and stops
/// when it no longer does: a unit that should run only online says `PartOf=` one of them.
public enum NetworkTarget: String, CaseIterable, Sendable, Comparable {
    /// `reachd-online.target`: reachable (a usable default route).
    case online
    /// `reachd-internet.target`: connectivity `full` (the check answered as expected); with the
    /// check off (`[Connectivity] Enabled=no`), reachable, as NetworkManager counts a path then.
    case internet
    /// `reachd-unmetered.target`: reachable over a path that is not `expensive`.
    case unmetered

    /// The unit name, `reachd-online.target`.
    public var unitName: String { "reachd-\(rawValue).target" }

    /// True when `status` meets the target's condition.
    public func holds(in status: Status) -> Bool {
        switch self {
        case .online: return status.reachable
        case .internet: return status.reachable && (status.connectivity == .full || !status.connectivityCheck)
        case .unmetered: return status.reachable && !status.expensive
        }
    }

    /// The order of the cases: online, internet, unmetered.
    private var order: Int {
        switch self {
        case .online: return 0
        case .internet: return 1
        case .unmetered: return 2
        }
    }

    public static func < (a: NetworkTarget, b: NetworkTarget) -> Bool { a.order < b.order }
}

/// When to start or stop one target (swift-service-lifecycle style: each method returns what to
/// do, the caller does it). A change of the condition is acted on only after it has held for
/// `holdSeconds`; a flap back before that cancels it, so a short flap starts or stops nothing.
/// Times are seconds of a monotonic clock.
public struct TargetHold: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        case none
        /// Call `deadlinePassed(now:)` at this time (a change is waiting for its hold).
        case wake(at: Double)
        /// Start (true) or stop (false) the target now.
        case apply(Bool)
    }

    public let holdSeconds: Double
    /// What the target was last set to; nil before the first decision (the dispatcher does not
    /// know whether the unit runs, and starting a running target or stopping a stopped one is
    /// harmless).
    public private(set) var applied: Bool?
    /// A change waiting for its hold: the condition it holds and since when.
    public private(set) var pending: (holds: Bool, since: Double)?

    public init(holdSeconds: Double) { self.holdSeconds = max(0, holdSeconds) }

    public static func == (a: TargetHold, b: TargetHold) -> Bool {
        a.holdSeconds == b.holdSeconds && a.applied == b.applied
            && a.pending?.holds == b.pending?.holds && a.pending?.since == b.pending?.since
    }

    /// The condition as the latest event says.
    public mutating func observe(_ holds: Bool, now: Double) -> Action {
        if applied == holds {
            pending = nil
            return .none
        }
        if let pending, pending.holds == holds { return .wake(at: pending.since + holdSeconds) }
        pending = (holds, now)
        if holdSeconds == 0 { return deadlinePassed(now: now) }
        return .wake(at: now + holdSeconds)
    }

    /// The time asked for by `.wake` has come (or any time: early calls ask to wake again).
    public mutating func deadlinePassed(now: Double) -> Action {
        guard let pending else { return .none }
        let deadline = pending.since + holdSeconds
        guard now >= deadline else { return .wake(at: deadline) }
        self.pending = nil
        applied = pending.holds
        return .apply(pending.holds)
    }

    /// The condition as an event says that must be acted on now, without the hold: reachd says
    /// the machine is about to sleep, and what is `PartOf=` the target must stop before it does
    /// (logind waits for reachd, not for a hold).
    public mutating func observeNow(_ holds: Bool) -> Action {
        pending = nil
        guard applied != holds else { return .none }
        applied = holds
        return .apply(holds)
    }
}
