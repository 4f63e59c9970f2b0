import FoundationEssentials

/// The status subscribers see, laid over the real one: the real events pass through unless a
/// simulation is in effect, and the simulation's life (start, change, expiry, reset, the
/// caller hanging up) makes events of its own. A state machine without I/O: the owner feeds it
/// the real events and the real status, keeps the one timer `timer` names armed, and publishes
/// the events it returns.
///
/// It numbers the published events itself, starting at the real initial event's number, so
/// the numbers keep rising whether an event is real or simulated. While a simulation is on,
/// the real events are not published; when it ends, one event (reason `simulation`) goes from
/// the simulated status to the real one as it is then, however many real changes happened.
public struct SimulationOverlay: Sendable {
    /// The simulation in effect.
    public struct Active: Equatable, Sendable {
        public var request: SimulateRequest
        /// The connection whose hang-up ends it (`whileConnected`).
        public var owner: Int?
        /// Identifies this simulation for its timer: a timer whose token is not the active one's
        /// is stale and does nothing.
        public var token: Int
    }

    /// What the owner must do after starting a simulation.
    public struct Started: Equatable, Sendable {
        /// The event to publish, if the published status changed.
        public var event: ReachabilityEvent?
    }

    /// The timer that ends the simulation in effect by itself: call `expire(token:real:now:)`
    /// with `token` after `seconds` (counted from when it last changed).
    public struct Timer: Equatable, Sendable {
        public var token: Int
        public var seconds: Int
    }

    /// What subscribers see now.
    public private(set) var published: Status
    /// The number of the last published event (or of the initial state).
    public private(set) var sequence: Int
    public private(set) var active: Active?
    private var lastToken = 0

    /// The one timer the owner keeps armed, nil for none: the active simulation's, when it has
    /// `seconds`. A simulation that replaces another replaces its timer, and every end (reset,
    /// hang-up, expiry) clears it, so after any call the owner cancels what it armed unless the
    /// token is the same, and arms this one. However many `Simulate` calls came, there is at
    /// most one.
    public var timer: Timer? {
        guard let active, let seconds = active.request.seconds else { return nil }
        return Timer(token: active.token, seconds: seconds)
    }

    /// - Parameter initial: the real initial state; its number is where numbering goes on.
    public init(initial: ReachabilityEvent) {
        published = initial.current
        sequence = initial.sequence
    }

    /// The published status as the `initial` event of a new subscription.
    public func initialEvent(reason: Reason = Reason(code: .initial), now: Date) -> ReachabilityEvent {
        ReachabilityEvent(sequence: sequence, timestamp: now, event: .initial, reason: reason, previous: nil, current: published)
    }

    /// A real event. Returns it renumbered when no simulation is on; nil during one (the real
    /// status shows when the simulation ends).
    public mutating func real(_ event: ReachabilityEvent) -> ReachabilityEvent? {
        guard active == nil, event.event == .reachabilityChanged else { return nil }
        if let previous = event.previous, previous.isCopy(of: published) {
            // Subscribers saw what the event starts from, so its changes are theirs: the same
            // event, numbered on from here, without comparing the statuses again.
            var renumbered = event
            sequence += 1
            renumbered.sequence = sequence
            published = event.current
            return renumbered
        }
        return emit(event.current, reason: event.reason, timestamp: event.timestamp)
    }

    /// Starts a simulation, or replaces the one in effect (whoever started it).
    /// - Parameters:
    ///   - real: the real status now; the fields the request leaves out come from it.
    ///   - owner: the caller's connection, ended by its hang-up when `whileConnected`.
    public mutating func simulate(_ request: SimulateRequest, real: Status, owner: Int?, now: Date) throws(Simulation.InvalidParameter) -> Started {
        guard let simulation = request.simulation else {
            return Started(event: reset(real: real, now: now))
        }
        let status = try simulation.resolve(over: real, now: now)
        lastToken += 1
        active = Active(request: request, owner: request.whileConnected ? owner : nil, token: lastToken)
        let event = emit(status, reason: Reason(code: .simulation, detail: "simulation started"), timestamp: now)
        return Started(event: event)
    }

    /// Ends the simulation (`reset: true`): one event back to `real`. Nil when none was on.
    public mutating func reset(real: Status, now: Date) -> ReachabilityEvent? {
        end(real: real, detail: "simulation reset", now: now)
    }

    /// The timer of the simulation `token` fired: if it is still the one in effect, it ends.
    public mutating func expire(token: Int, real: Status, now: Date) -> ReachabilityEvent? {
        guard active?.token == token else { return nil }
        return end(real: real, detail: "simulation time is up", now: now)
    }

    /// A connection closed: if it holds the simulation (`whileConnected`), it ends.
    public mutating func hungUp(connection: Int, real: Status, now: Date) -> ReachabilityEvent? {
        guard let owner = active?.owner, owner == connection else { return nil }
        return end(real: real, detail: "simulating client hung up", now: now)
    }

    private mutating func end(real: Status, detail: String, now: Date) -> ReachabilityEvent? {
        guard active != nil else { return nil }
        active = nil
        var status = real
        status.since = now
        return emit(status, reason: Reason(code: .simulation, detail: detail), timestamp: now)
    }

    /// Publishes `status` as the next event, if it differs from what subscribers saw.
    private mutating func emit(_ status: Status, reason: Reason, timestamp: Date) -> ReachabilityEvent? {
        let previous = published
        let changes = status.changes(from: previous)
        guard !changes.isEmpty else {
            // Nothing an event reports changed: keep `since`, carry the fresh details.
            var quiet = status
            quiet.since = previous.since
            published = quiet
            return nil
        }
        published = status
        sequence += 1
        return ReachabilityEvent(sequence: sequence, timestamp: timestamp, event: .reachabilityChanged,
                                 reason: reason, previous: previous, current: status, changes: changes)
    }
}
