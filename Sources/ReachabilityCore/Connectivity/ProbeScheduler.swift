import FoundationEssentials

/// Decides when the connectivity check runs; a state machine in the style of
/// swift-service-lifecycle: each event method returns the actions to take, and the caller
/// (ConnectivityChecker) performs them — runs the HTTP check, arms the timer, publishes.
///
/// The rules:
/// - at start, and at once on every change of the primary path (`ProbePath`: interface,
///   addresses); a check still running for the old path is cancelled and its result ignored;
/// - a change of the path's routers or captive-portal API URI alone (`ProbePath.differsOnlyInAnnouncements`:
///   what router advertisements change, at any rate) cancels nothing: a check under way answers
///   for the new path too, and another follows within the network's floor;
/// - every `interval` while the verdict is `full` (or `unknown`);
/// - while `portal` or `limited`, again after a backoff that starts at `initialBackoff` and
///   doubles up to `interval`, so a login at a captive portal is noticed within seconds;
/// - while a captive-portal API says the session ends in `seconds-remaining`, again shortly
///   before it does (`CaptivePortalAPI.recheckDelay`), if that is sooner than the above;
/// - never while not reachable: the verdict `none` is published at once;
/// - a manual request (`Probe()`, `reachctl probe`) starts a check, or, while one runs, waits
///   for that one (requests coalesce: never more than one check at a time); within
///   `minManualInterval` of the last check on the same path it gets that check's verdict, so a
///   flood of requests makes at most one HTTP request per interval;
/// - disabled: nothing runs, connectivity is `unknown` (no probe), requests answer `disabled`;
/// - the network's floor: anyone on the link can change the captive-portal API URI and the
///   routers with every router advertisement, so a check that asks an API, and a check for a
///   change that only concerns those, starts at most once per interface every `networkFloor`
///   seconds; one that comes sooner waits for the floor and then takes the newest path;
/// - a check that found no free thread is no verdict: it is tried again after `busyRetry`.
public struct ProbeScheduler: Sendable {
    /// The connectivity check's settings: the `[Connectivity]` section as it is, the one key of
    /// `[Limits]` that concerns the check, and the backoff, which the file does not set. The
    /// section's keys read through (`configuration.url`, `configuration.enabled`).
    @dynamicMemberLookup
    public struct Configuration: Equatable, Sendable {
        /// `[Connectivity]`. A new `Response=` is not used for scheduling, but makes the last verdict stale.
        public var connectivity: ReachdConfiguration.ConnectivitySection
        /// `[Limits] ProbeMinInterval=`: manual requests within this many seconds of the last
        /// check share its verdict.
        public var probeMinInterval: TimeInterval
        /// First retry delay while portal/limited, in seconds (doubles up to the interval).
        public var initialBackoff: TimeInterval
        /// Seconds between two checks on one interface that ask a captive-portal API or follow a
        /// change of its URI alone: what the network can make reachd do is bounded.
        public var networkFloor: TimeInterval
        /// Seconds before a check that found every check thread busy is tried again.
        public var busyRetry: TimeInterval

        public init(connectivity: ReachdConfiguration.ConnectivitySection = .init(),
                    probeMinInterval: TimeInterval = ReachdConfiguration.LimitsSection().probeMinIntervalSeconds,
                    initialBackoff: TimeInterval = 2, networkFloor: TimeInterval = 2, busyRetry: TimeInterval = 0.5) {
            self.connectivity = connectivity
            self.probeMinInterval = probeMinInterval
            self.initialBackoff = initialBackoff
            self.networkFloor = networkFloor
            self.busyRetry = busyRetry
        }

        /// The check's part of reachd's configuration: `[Connectivity]` and `[Limits] ProbeMinInterval=`.
        public init(_ file: ReachdConfiguration) {
            self.init(connectivity: file.connectivity, probeMinInterval: file.limits.probeMinIntervalSeconds)
        }

        public subscript<Value>(dynamicMember key: WritableKeyPath<ReachdConfiguration.ConnectivitySection, Value>) -> Value {
            get { connectivity[keyPath: key] }
            set { connectivity[keyPath: key] = newValue }
        }

        /// Seconds between checks while the verdict is full (at least 1).
        var interval: TimeInterval { max(connectivity.intervalSeconds, 1) }
        /// The network's floor, at least 0.
        var floor: TimeInterval { max(networkFloor, 0) }
        /// The retry delay of a check that found no thread, between 0.05 s and `interval`.
        var retryWhenBusy: TimeInterval { min(max(busyRetry, 0.05), interval) }
        /// The first retry delay, between 0.1 s and `interval`.
        var firstBackoff: TimeInterval { min(max(initialBackoff, 0.1), interval) }
        var minManualInterval: TimeInterval { max(probeMinInterval, 0) }
    }

    /// What a manual request is answered with.
    public enum Reply: Equatable, Sendable {
        case probe(Probe)
        /// `io.reachd.Reachability.ProbeDisabled`.
        case disabled
    }

    public enum Action: Equatable, Sendable {
        /// Run a check over `path`; report it with `probeCompleted(id:probe:)`.
        case startProbe(id: Int, path: ProbePath)
        /// The check `id` is stale: stop it if possible (its result is ignored anyway).
        case cancelProbe(id: Int)
        /// Arm the (single) timer, replacing any armed one; call `timerFired(id:)` when it fires.
        case schedule(after: TimeInterval, timer: Int)
        /// Disarm the timer.
        case cancelTimer
        /// Hand this verdict to the monitor (`setProbe`); nil: not checked (connectivity unknown).
        case publish(Probe?)
        /// Answer the manual requests `requests`.
        case reply(requests: [Int], Reply)
    }

    public private(set) var configuration: Configuration
    public private(set) var path: ProbePath?
    /// The id of the check running now.
    public private(set) var inFlight: Int?
    /// The id of the armed timer.
    public private(set) var timer: Int?
    /// The delay of the last retry while portal/limited; nil while full.
    public private(set) var backoff: TimeInterval?
    /// Manual requests waiting for a check that began at or after the last change of the path
    /// (or of its routers and API URI).
    public private(set) var pending: [Int] = []
    private var started = false
    /// The armed timer waits for the network's floor (a manual request then waits with it).
    private var armedFloorTimer = false
    private var nextID = 1
    /// The result last published (nil: nothing, or `unknown`).
    private var published: Connectivity?
    /// The last check that completed on the current path and configuration, and when (never
    /// the wall clock: a step of the date must not make a verdict fresh or stale).
    private var lastCheck: (probe: Probe, at: ClockReading)?
    /// When a check last started on each interface (the network's floor counts from it).
    private var lastStart: [String: ClockReading] = [:]
    /// The path's routers or API URI changed while a check was under way: another check follows
    /// that one (within the network's floor) instead of cancelling it.
    private var recheckAfterFlight = false

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The monitor's initial status is known: begin.
    public mutating func start(path: ProbePath?, now: ClockReading) -> [Action] {
        guard !started else { return pathChanged(path, now: now) }
        started = true
        self.path = path
        guard configuration.enabled else { return [.publish(nil)] }
        return checkOrPublishNone(now: now)
    }

    /// The monitor's status changed; only a change of `ProbePath` matters.
    public mutating func pathChanged(_ newPath: ProbePath?, now: ClockReading) -> [Action] {
        guard started, newPath != path else { return [] }
        let wasReachable = path != nil
        let announcementsOnly = path.map { $0.differsOnlyInAnnouncements(from: newPath) } ?? false
        path = newPath
        guard configuration.enabled else { lastCheck = nil; return [] }
        if announcementsOnly, let newPath {
            // The check binds to the interface and its addresses: one under way answers for the
            // new routers (or URI) too, and a flood of them can neither cancel checks nor start
            // more than the floor allows.
            return checkAgain(newPath, now: now, apiOnly: true)
        }
        lastCheck = nil
        var actions = stopRunning()
        backoff = nil
        if newPath != nil && !wasReachable && published == Connectivity.none {
            // "none" would contradict a reachable status until the check answers: not checked yet.
            actions.append(.publish(nil))
            published = nil
        }
        return actions + checkOrPublishNone(now: now)
    }

    /// A check finished. Results of cancelled (stale) checks are ignored.
    public mutating func probeCompleted(id: Int, probe: Probe, now: ClockReading) -> [Action] {
        guard started, id == inFlight else { return [] }
        inFlight = nil
        lastCheck = (probe, now)
        var actions: [Action] = [.publish(probe)]
        published = probe.result
        // A check that began before the path's routers or API URI changed answers for the
        // path's verdict, not for a `Probe()`: the requests wait for the check that follows.
        if !pending.isEmpty && !recheckAfterFlight {
            actions.append(.reply(requests: pending, .probe(probe)))
            pending = []
        }
        var delay: TimeInterval
        switch probe.result {
        case .full, .unknown, .none:
            backoff = nil
            delay = configuration.interval
        case .portal, .limited:
            let next = backoff.map { $0 * 2 } ?? configuration.firstBackoff
            backoff = min(next, configuration.interval)
            delay = backoff ?? configuration.interval
        }
        if let seconds = probe.secondsRemaining {
            // Never sooner than the first backoff: an API that says 0 seconds for ever is not
            // asked in a loop.
            delay = min(delay, max(configuration.firstBackoff, CaptivePortalAPI.recheckDelay(secondsRemaining: seconds)))
        }
        if recheckAfterFlight, let path {
            // The routers or the API URI changed while it ran: the newest path is checked when
            // the floor allows.
            recheckAfterFlight = false
            return actions + begin(path, now: now, apiOnly: true)
        }
        let timerID = makeID()
        timer = timerID
        actions.append(.schedule(after: delay, timer: timerID))
        return actions
    }

    /// The check `id` could not start: every check thread is busy. No verdict (a full pool says
    /// nothing about the network): the same path is tried again after `busyRetry`.
    public mutating func probeBusy(id: Int) -> [Action] {
        guard started, id == inFlight else { return [] }
        inFlight = nil
        // The retry reads the newest path.
        recheckAfterFlight = false
        if timer != nil { return [] }
        let timerID = makeID()
        timer = timerID
        return [.schedule(after: configuration.retryWhenBusy, timer: timerID)]
    }

    /// The timer armed by `.schedule(after:timer:)` fired. Stale timers are ignored.
    public mutating func timerFired(id: Int, now: ClockReading) -> [Action] {
        guard started, configuration.enabled, id == timer else { return [] }
        timer = nil
        guard let path, inFlight == nil else { return [] }
        return begin(path, now: now, apiOnly: false)
    }

    /// A manual check is requested (`Probe()`); answered by a later `.reply`.
    public mutating func probeRequested(_ request: Int, now: ClockReading) -> [Action] {
        guard configuration.enabled else { return [.reply(requests: [request], .disabled)] }
        guard let path else {
            return [.reply(requests: [request], .probe(ProbeVerdict.notReachable(url: configuration.url, at: now.wall)))]
        }
        if inFlight == nil, let lastCheck, now.seconds(since: lastCheck.at) < configuration.minManualInterval,
           now.uptime >= lastCheck.at.uptime {
            return [.reply(requests: [request], .probe(lastCheck.probe))]
        }
        pending.append(request)
        if inFlight != nil { return [] }
        if let wait = floorWait(path, now: now, apiOnly: false) {
            // Within the network's floor: the request waits for the check the floor allows.
            if timer != nil && armedFloorTimer { return [] }
            let timerID = makeID()
            timer = timerID
            armedFloorTimer = true
            return [.schedule(after: wait, timer: timerID)]
        }
        var actions: [Action] = []
        if timer != nil { actions.append(.cancelTimer); timer = nil }
        actions.append(startProbe(path, now: now))
        return actions
    }

    /// The path's traffic goes unanswered (a data stall), or is answered again: check now,
    /// whatever the last check said. A check under way began before: another follows it. The
    /// network's floor still holds.
    public mutating func recheck(now: ClockReading) -> [Action] {
        guard started, configuration.enabled, let path else { return [] }
        return checkAgain(path, now: now, apiOnly: false)
    }

    /// What was last checked says nothing now (`Probe()` waits for a new check): a check under
    /// way is followed by another; else one starts, when the network's floor allows.
    private mutating func checkAgain(_ path: ProbePath, now: ClockReading, apiOnly: Bool) -> [Action] {
        lastCheck = nil
        if inFlight != nil {
            recheckAfterFlight = true
            return []
        }
        if timer != nil && armedFloorTimer { return [] }
        var actions: [Action] = []
        if timer != nil { actions.append(.cancelTimer); timer = nil }
        return actions + begin(path, now: now, apiOnly: apiOnly)
    }

    /// New settings (SIGHUP). Any change of what a check asks or when (enabled, URL, Response,
    /// interval, backoff) restarts the schedule with a check at once; a new request rate or
    /// Timeout= applies from the next check.
    public mutating func reconfigure(_ newConfiguration: Configuration, now: ClockReading) -> [Action] {
        guard newConfiguration != configuration else { return [] }
        let schedulingPart = { (c: Configuration) -> Configuration in
            var c = c; c.probeMinInterval = 0; c.connectivity.timeoutSeconds = 0; return c
        }
        let schedulingUnchanged = schedulingPart(newConfiguration) == schedulingPart(configuration)
        configuration = newConfiguration
        if schedulingUnchanged { return [] }
        lastCheck = nil
        guard started else { return [] }
        var actions = stopRunning()
        backoff = nil
        guard configuration.enabled else {
            if !pending.isEmpty { actions.append(.reply(requests: pending, .disabled)); pending = [] }
            published = nil
            return actions + [.publish(nil)]
        }
        return actions + checkOrPublishNone(now: now)
    }

    /// Shut down: nothing runs after this; waiting requests are answered `disabled`.
    public mutating func stop() -> [Action] {
        var actions = stopRunning()
        lastCheck = nil
        if !pending.isEmpty { actions.append(.reply(requests: pending, .disabled)); pending = [] }
        started = false
        return actions
    }

    private mutating func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    private mutating func startProbe(_ path: ProbePath, now: ClockReading) -> Action {
        let id = makeID()
        inFlight = id
        armedFloorTimer = false
        lastStart[path.interface] = now
        if lastStart.count > 16 {
            // Interfaces come and go: keep the floor of the ones checked lately.
            lastStart = lastStart.filter { now.seconds(since: $0.value) < configuration.floor }
            lastStart[path.interface] = now
        }
        return .startProbe(id: id, path: path)
    }

    /// How long a check of `path` must wait for the network's floor; nil: it may start now.
    /// The floor holds for a check that asks an API, and for one after a change of the routers
    /// or the API URI alone (`apiOnly`: the withdrawal of an URI, which asks no API, as much as a new one).
    private func floorWait(_ path: ProbePath, now: ClockReading, apiOnly: Bool) -> TimeInterval? {
        guard path.captivePortalApi != nil || apiOnly, let last = lastStart[path.interface] else { return nil }
        let since = now.seconds(since: last)
        // A clock that went back counts as within the floor from now.
        guard since < configuration.floor else { return nil }
        return configuration.floor - max(since, 0)
    }

    /// Starts a check of `path`, or arms the timer for when the network's floor allows one (the
    /// path is read again then: the newest URI is the one asked).
    private mutating func begin(_ path: ProbePath, now: ClockReading, apiOnly: Bool) -> [Action] {
        guard let wait = floorWait(path, now: now, apiOnly: apiOnly) else { return [startProbe(path, now: now)] }
        let timerID = makeID()
        timer = timerID
        armedFloorTimer = true
        return [.schedule(after: wait, timer: timerID)]
    }

    /// Cancels the running check and the timer.
    private mutating func stopRunning() -> [Action] {
        var actions: [Action] = []
        if let inFlight { actions.append(.cancelProbe(id: inFlight)); self.inFlight = nil }
        if timer != nil { actions.append(.cancelTimer); timer = nil }
        armedFloorTimer = false
        recheckAfterFlight = false
        return actions
    }

    /// With a path: check now (or when the network's floor allows). Without: publish `none` and
    /// answer waiting requests with it.
    private mutating func checkOrPublishNone(now: ClockReading, apiOnly: Bool = false) -> [Action] {
        guard let path else {
            let none = ProbeVerdict.notReachable(url: configuration.url, at: now.wall)
            published = Connectivity.none
            var actions: [Action] = [.publish(none)]
            if !pending.isEmpty { actions.append(.reply(requests: pending, .probe(none))); pending = [] }
            return actions
        }
        return begin(path, now: now, apiOnly: apiOnly)
    }
}
