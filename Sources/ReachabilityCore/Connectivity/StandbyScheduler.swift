import FoundationEssentials

/// Decides when each standby uplink is checked; a state machine like `ProbeScheduler` (each
/// event method returns the actions; `ConnectivityChecker` runs the checks bound to the
/// uplink's interface, arms the timers, hands the verdicts to the monitor).
///
/// The rules:
/// - an uplink that becomes standby (or whose path changes) is checked at once, but a change of
///   its routers or captive-portal API URI alone waits for its next check (router advertisements
///   can make those changes at any rate, and the network's floor holds on standby links too); one that is no
///   longer standby (it became the primary, lost its route, or `CheckStandby=` leaves it out)
///   stops being checked and its verdict is withdrawn (`publish(…, nil)`);
/// - each is checked again every `standbyInterval` while its verdict is `full`, `unknown` or
///   `none`, and after a backoff while `portal` or `limited` (from `initialBackoff`, doubling up
///   to `standbyInterval`), as the primary is;
/// - at most one check per uplink at a time; the verdicts never touch `Status.connectivity`.
public struct StandbyScheduler: Sendable {
    public enum Action: Equatable, Sendable {
        /// Run a check over `path` bound to its interface; report with `probeCompleted(id:probe:now:)`.
        case startProbe(id: Int, path: ProbePath)
        /// The check `id` is stale: stop it if possible (its result is ignored anyway).
        case cancelProbe(id: Int)
        /// Arm timer `timer`; call `timerFired(id:)` when it fires.
        case schedule(after: TimeInterval, timer: Int)
        /// Disarm timer `timer`.
        case cancelTimer(Int)
        /// The verdict of the uplink at `index` (nil: no longer checked), for `Interface.connectivity`.
        case publish(index: Int, Probe?)
    }

    private struct Uplink {
        var path: ProbePath
        var inFlight: Int?
        var timer: Int?
        var backoff: TimeInterval?
        var verdict: Probe?
    }

    /// `[Connectivity]` and the backoff, as the primary's check has them.
    public private(set) var configuration: ProbeScheduler.Configuration
    private var uplinks: [Int: Uplink] = [:]
    private var nextID = 1

    public init(configuration: ProbeScheduler.Configuration) {
        self.configuration = configuration
    }

    /// Seconds between checks of a standby uplink: `StandbyInterval=`, by default 5 × `Interval=`.
    public var interval: TimeInterval {
        max(configuration.connectivity.standbyIntervalSeconds ?? 5 * configuration.interval, 1)
    }

    /// The uplinks checked now, by index.
    public var checked: [Int: ProbePath] { uplinks.mapValues(\.path) }

    /// The last verdict of the uplink at `index` for `path`, if it was checked over that very
    /// path: what a failover to it can show at once.
    public func verdict(index: Int, path: ProbePath) -> Probe? {
        guard let uplink = uplinks[index], uplink.path.index == path.index, uplink.path.interface == path.interface,
              uplink.path.addresses == path.addresses else { return nil }
        return uplink.verdict
    }

    /// Whether `uplinksChanged` looks at its candidates at all: not with the check off or
    /// `CheckStandby=no` (an empty list does the same then, and costs nothing to make).
    public var wantsCandidates: Bool {
        configuration.enabled && configuration.connectivity.checkStandby != .no
    }

    /// The monitor's standby uplinks now (`StandbyUplink.all`).
    public mutating func uplinksChanged(_ candidates: [StandbyUplink]) -> [Action] {
        var wanted: [Int: ProbePath] = [:]
        if configuration.enabled {
            for candidate in candidates where configuration.connectivity.checkStandby.checks(expensive: candidate.expensive) {
                wanted[candidate.path.index] = candidate.path
            }
        }
        var actions: [Action] = []
        for index in uplinks.keys.sorted() where wanted[index] != uplinks[index]?.path {
            if let path = wanted[index], uplinks[index]?.path.differsOnlyInAnnouncements(from: path) == true {
                // Anyone on the link can change the API URI, and add routers, with every
                // advertisement: the new ones are asked at the uplink's next turn, its verdict
                // stays until then.
                uplinks[index]?.path = path
                continue
            }
            actions += drop(index)
        }
        for index in wanted.keys.sorted() where uplinks[index] == nil {
            guard let path = wanted[index] else { continue }
            let id = makeID()
            uplinks[index] = Uplink(path: path, inFlight: id)
            actions.append(.startProbe(id: id, path: path))
        }
        return actions
    }

    /// A check finished. Results of cancelled (stale) checks are ignored.
    public mutating func probeCompleted(id: Int, probe: Probe) -> [Action] {
        guard let index = uplinks.first(where: { $0.value.inFlight == id })?.key, var uplink = uplinks[index] else { return [] }
        uplink.inFlight = nil
        uplink.verdict = probe
        var delay: TimeInterval
        switch probe.result {
        case .full, .unknown, .none:
            uplink.backoff = nil
            delay = interval
        case .portal, .limited:
            let next = uplink.backoff.map { $0 * 2 } ?? min(configuration.firstBackoff, interval)
            uplink.backoff = min(next, interval)
            delay = uplink.backoff ?? interval
        }
        if let seconds = probe.secondsRemaining {
            delay = min(delay, max(configuration.firstBackoff, CaptivePortalAPI.recheckDelay(secondsRemaining: seconds)))
        }
        let timer = makeID()
        uplink.timer = timer
        uplinks[index] = uplink
        return [.publish(index: index, probe), .schedule(after: delay, timer: timer)]
    }

    /// A timer armed by `.schedule` fired. Stale timers are ignored.
    public mutating func timerFired(id: Int) -> [Action] {
        guard let index = uplinks.first(where: { $0.value.timer == id })?.key, var uplink = uplinks[index],
              uplink.inFlight == nil else { return [] }
        let probe = makeID()
        uplink.timer = nil
        uplink.inFlight = probe
        uplinks[index] = uplink
        return [.startProbe(id: probe, path: uplink.path)]
    }

    /// The standby uplink at `index` is suspected of a data stall, or its traffic is answered
    /// again: check it now (unless a check of it is under way).
    public mutating func recheck(index: Int) -> [Action] {
        guard var uplink = uplinks[index], uplink.inFlight == nil else { return [] }
        var actions: [Action] = []
        if let timer = uplink.timer { actions.append(.cancelTimer(timer)); uplink.timer = nil }
        let id = makeID()
        uplink.inFlight = id
        uplinks[index] = uplink
        return actions + [.startProbe(id: id, path: uplink.path)]
    }

    /// New settings (SIGHUP): a change of what or when the checks ask starts over with the
    /// uplinks `candidates`.
    public mutating func reconfigure(_ newConfiguration: ProbeScheduler.Configuration, candidates: [StandbyUplink]) -> [Action] {
        guard newConfiguration != configuration else { return [] }
        let schedulingPart = { (c: ProbeScheduler.Configuration) -> ProbeScheduler.Configuration in
            var c = c; c.probeMinInterval = 0; c.connectivity.timeoutSeconds = 0; return c
        }
        let restart = schedulingPart(newConfiguration) != schedulingPart(configuration)
        configuration = newConfiguration
        guard restart else { return [] }
        return stop() + uplinksChanged(candidates)
    }

    /// Nothing is checked any more: every check and timer cancelled, every verdict withdrawn.
    public mutating func stop() -> [Action] {
        uplinks.keys.sorted().flatMap { drop($0) }
    }

    private mutating func drop(_ index: Int) -> [Action] {
        guard let uplink = uplinks.removeValue(forKey: index) else { return [] }
        var actions: [Action] = []
        if let id = uplink.inFlight { actions.append(.cancelProbe(id: id)) }
        if let timer = uplink.timer { actions.append(.cancelTimer(timer)) }
        if uplink.verdict != nil { actions.append(.publish(index: index, nil)) }
        return actions
    }

    private mutating func makeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }
}
