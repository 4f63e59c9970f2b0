import FoundationEssentials

/// The monitor's state and every decision about it, with no I/O: `ReachabilityMonitor` reads
/// sockets, sysfs, leases and the clock, hands each fact to the core with `now`, and performs
/// the actions that come back. Every action goes outward (an event, a status to publish, a
/// timer, a dump of the kernel, a lease to read, a log line); none asks for an answer, so the
/// shell's loop never calls itself: what a dump finds is a new input (`kernelDumped`).
///
/// The core owns the kernel's picture (`KernelStateTable`), the `StatusTracker`, the links'
/// verdicts (kind, metered, ignored, constrained: decided once per name, from the sysfs facts
/// the shell attached to the link's first message), what the network says about cost (the
/// leases' and NetworkManager's metered hints) and, through its `MonitorScheduler`, the
/// verdicts, the modems, the timers and the link quality estimator. Each input changes what it
/// touches: a link's slice, the verdicts, the quality figures; the whole picture is built again
/// only for a new table (start, overrun, wake) or a new configuration.
public struct MonitorCore: Sendable {
    /// What the core decides with: the monitor's configuration, without what only the shell uses.
    public struct Configuration: Equatable, Sendable {
        /// `[Monitor]`: ignored interfaces and `Debounce=`.
        public var monitor = ReachdConfiguration.MonitorSection()
        /// `[Interfaces]`: forced kinds, metered, not metered, constrained.
        public var interfaces = ReachdConfiguration.InterfacesSection()
        /// `[Connectivity] Enabled=` (statuses say whether the internet is checked).
        public var connectivityCheck = true
        /// `[LinkQuality]`.
        public var linkQuality = ReachdConfiguration.LinkQualitySection()
        /// `[DataStall]`.
        public var dataStall = DataStallDetector.Configuration()
        /// The sequence number of the initial state (see `StatusTracker`).
        public var firstSequence = 0

        public init() {}

        public init(monitor: ReachdConfiguration.MonitorSection, interfaces: ReachdConfiguration.InterfacesSection,
                    connectivityCheck: Bool, linkQuality: ReachdConfiguration.LinkQualitySection,
                    dataStall: DataStallDetector.Configuration = DataStallDetector.Configuration(), firstSequence: Int) {
            self.monitor = monitor; self.interfaces = interfaces; self.connectivityCheck = connectivityCheck
            self.linkQuality = linkQuality; self.dataStall = dataStall; self.firstSequence = firstSequence
        }
    }

    public typealias Timer = MonitorScheduler.Timer

    /// What the shell does; in order, and without answering.
    public enum Action: Equatable, Sendable {
        /// The status was classified again: publish it (and its slices) for other threads.
        case publish
        /// Hand the event to the observers. `readStarted`: when the netlink read that caused
        /// it began (uptime), for the timing logged at debug level.
        case emit(ReachabilityEvent, readStarted: TimeInterval?)
        /// The measured figures moved without an event: the status as `GetStatus` should show it.
        case quiet(Status)
        /// Arm `timer` to fire after this many seconds (replacing it); then call `timerFired`.
        case arm(Timer, after: TimeInterval)
        case cancel(Timer)
        /// Dump links, addresses, routes and rules, and hand the table to `kernelDumped` (a new
        /// input, with the sysfs facts of every link), or nil when the dump failed.
        case rereadKernel(MonitorScheduler.RereadCause)
        /// Read the DHCP leases of these links (off the monitor's queue); hand what they say to
        /// `leaseMetered`.
        case refreshLeases([Int])
        /// The link is gone: forget its lease.
        case forgetLease(Int)
        /// Call `costFlipIntervalEnded(index:now:)` after this many seconds: the end of a link's
        /// second in which cost flips are held.
        case armCostFlip(index: Int, after: TimeInterval)
        /// Routes, rules or addresses changed: caches of route look-ups are stale.
        case routingChanged
        /// Check uplink `index` now (a data stall was suspected, or its traffic is answered
        /// again): the path's check when `path`, else that standby uplink's. Its verdict comes
        /// back as any other.
        case recheck(index: Int, path: Bool)
        /// Write a line to the log (rate limits are decided here).
        case log(LogLevel, String)
    }

    public internal(set) var configuration: Configuration
    /// The kernel's links, addresses, routes, rules and announcements as the monitor knows them.
    public internal(set) var table = KernelStateTable()
    public internal(set) var tracker: StatusTracker
    /// When to classify and with which reason; the verdicts, modems, timers and link quality.
    public internal(set) var scheduler: MonitorScheduler
    /// Per link index: the decided kind and the configuration's verdicts, until the link is renamed.
    var linkVerdicts: [Int: LinkVerdict] = [:]
    /// Per link index: what sysfs said about the link's kind (attached by the shell), by name.
    var kindFacts: [Int: InterfaceKindFacts] = [:]
    /// What the network says about links' costs when the configuration names a link neither
    /// `Metered=` nor `NotMetered=`: per index its DHCP lease, and NetworkManager's metered names.
    var leaseMetered: [Int: Bool] = [:]
    var networkManagerMetered: Set<String> = []
    /// At most one `costChanged` per link a second, flips logged once a minute: what the
    /// classifier takes as a link's guess while it flips is what subscribers were last shown.
    var costFlips = CostFlipMerger()
    /// Data stalls, from the passive dumps' segment counts.
    var stallDetector = DataStallDetector()
    /// Uplinks checked because of a data stall, whose next verdict carries `dataStall`.
    var stallRechecks: Set<Int> = []
    /// The uplinks last handed to the estimator (the quality step runs when they change).
    var qualityUplinks: [QualityUplink]?
    var logLimits = LogLimits()

    /// What the network can make the monitor log: a few lines, then one a minute.
    struct LogLimits: Sendable {
        /// Datagrams from other processes.
        var foreign = LogRateLimiter(burst: 3, interval: 60)
        /// Malformed router advertisement options (anyone on the link can send them).
        var option = LogRateLimiter(burst: 10, interval: 60)
    }

    public init(configuration: Configuration = Configuration(), now: ClockReading) {
        self.configuration = configuration
        var scheduler = MonitorScheduler(configuration: MonitorScheduler.Configuration(configuration.monitor))
        _ = scheduler.qualityConfigured(enabled: configuration.linkQuality.enabled,
                                        configuration: LinkQualityEstimator.Configuration(configuration.linkQuality), now: now)
        self.scheduler = scheduler
        stallDetector = DataStallDetector(configuration: configuration.dataStall)
        var nothingYet = NetworkSnapshot()
        nothingYet.connectivityCheck = configuration.connectivityCheck
        tracker = StatusTracker(snapshot: nothingYet, firstSequence: configuration.firstSequence, now: now.wall)
    }

    /// The newest status.
    public var status: Status { tracker.status }
    /// Between `sleep` and `wake`.
    public var asleep: Bool { scheduler.asleep }
    public var modems: [ModemState] { scheduler.modems }
    public var wifi: [WiFiDevice] { scheduler.wifi }
    public var standbyVerdicts: [Int: Probe] { scheduler.standbyVerdicts }
    /// The timers armed, with their deadlines (uptime).
    public var armed: [Timer: TimeInterval] { scheduler.armed }

    // MARK: Start, stop, configuration

    /// The monitor listens, with `table` freshly dumped and the sysfs facts of its links.
    /// `observed`: someone already saw a state (they are told the difference, `resync`).
    public mutating func start(table: KernelStateTable, kindFacts: [Int: InterfaceKindFacts], observed: Bool,
                               now: ClockReading) -> [Action] {
        self.table = table
        self.kindFacts = kindFacts
        linkVerdicts = [:]
        qualityUplinks = nil
        var actions: [Action] = []
        run(scheduler.start(observed: observed, now: now), now: now, into: &actions)
        return actions
    }

    /// The monitor stopped: every timer is disarmed, and what the leases said is forgotten (a
    /// new watcher reports from nothing known).
    public mutating func stop() -> [Action] {
        leaseMetered = [:]
        costFlips.forgetAll()
        var actions: [Action] = []
        run(scheduler.stop(), now: nil, into: &actions)
        return actions
    }

    /// A new configuration (kinds, metered, ignored, debounce, quality), with the sysfs facts of
    /// every link read afresh; classified whole (`configReloaded`).
    public mutating func reconfigured(_ configuration: Configuration, kindFacts: [Int: InterfaceKindFacts],
                                      now: ClockReading) -> [Action] {
        var next = configuration
        next.firstSequence = self.configuration.firstSequence
        self.configuration = next
        self.kindFacts = kindFacts
        linkVerdicts = [:]
        // The check turned off cancels what it ran: no verdict will answer a stall's request.
        if !next.connectivityCheck { stallRechecks = [] }
        if next.dataStall != stallDetector.configuration {
            stallDetector.configuration = next.dataStall
            if !next.dataStall.enabled {
                _ = stallDetector.reset()
                stallRechecks = []
                scheduler.takeStalls([:])
            }
        }
        // The estimator may have started afresh (`Enabled=` turned off and on): tell it the uplinks again.
        qualityUplinks = nil
        var actions: [Action] = []
        run(scheduler.qualityConfigured(enabled: next.linkQuality.enabled,
                                        configuration: LinkQualityEstimator.Configuration(next.linkQuality), now: now),
            now: now, into: &actions)
        run(scheduler.reconfigured(MonitorScheduler.Configuration(next.monitor), now: now), now: now, into: &actions)
        return actions
    }

    /// A timer armed by `.arm` fired.
    public mutating func timerFired(_ timer: Timer, now: ClockReading) -> [Action] {
        var actions: [Action] = []
        run(scheduler.timerFired(timer, now: now), now: now, into: &actions)
        return actions
    }

    // MARK: The scheduler's decisions, carried out

    /// Carries out the scheduler's `decisions` on the core's own state, in order; what goes
    /// outward is appended to `actions`. `now` is nil only for `stop`, which classifies nothing.
    mutating func run(_ decisions: [MonitorScheduler.Action], now: ClockReading?, into actions: inout [Action]) {
        for decision in decisions {
            switch decision {
            case .arm(let timer, let seconds):
                actions.append(.arm(timer, after: seconds))
            case .cancel(let timer):
                actions.append(.cancel(timer))
            case .rereadKernel(let cause):
                actions.append(.rereadKernel(cause))
            case .evaluate(let evaluation):
                guard let now else { continue }
                classify(evaluation, now: now, into: &actions)
            case .initialize:
                guard let now else { continue }
                decideVerdicts(for: table.links.keys)
                tracker = StatusTracker(snapshot: scheduler.reported.snapshot(of: table, connectivityCheck: configuration.connectivityCheck,
                                                                              verdict: verdictLookup()),
                                        firstSequence: configuration.firstSequence, now: now.wall)
                actions.append(.publish)
                takeQualityUplinks(now: now, into: &actions)
                tracker.publishQuietly()
            case .dropVerdicts:
                guard let now else { continue }
                run(scheduler.dropVerdicts(path: ProbePath(tracker.status), now: now), now: now, into: &actions)
            case .expireAnnouncements:
                guard let now else { continue }
                var ranOut: Set<Int> = [], contents: Set<Int> = []
                table.expireAnnouncements(now: now.uptime, touching: &ranOut, contents: &contents)
                if !contents.isEmpty { actions.append(.routingChanged) }
                run(scheduler.announcementsExpired(touched: ranOut, contents: contents,
                                                   nextExpiry: table.nextAnnouncementDeadline, now: now),
                    now: now, into: &actions)
            }
        }
    }

    /// Classifies as `evaluation` says; the event, if any, goes out after the status is published.
    private mutating func classify(_ evaluation: MonitorScheduler.Evaluation, now: ClockReading, into actions: inout [Action]) {
        if evaluation.whole { decideVerdicts(for: table.links.keys) } else { decideVerdicts(for: evaluation.touched) }
        let figures = evaluation.quality || evaluation.verdict || evaluation.standby || evaluation.wifi
        let before = figures ? tracker.status : nil
        let outcome = tracker.update(evaluation, table: table, reported: scheduler.reported,
                                     connectivityCheck: configuration.connectivityCheck, verdict: verdictLookup(), now: now.wall)
        actions.append(.publish)
        switch outcome {
        case .none:
            scheduler.evaluated(emitted: false)
            if let before, Self.figuresMoved(from: before, to: tracker.status) { actions.append(.quiet(tracker.status)) }
        case .emit(let event):
            scheduler.evaluated(emitted: true)
            actions.append(.emit(event, readStarted: evaluation.readStarted))
            // The uplinks follow from the path, the interfaces and the modems: unchanged, no step.
            if evaluation.modems || evaluation.wifi || evaluation.whole || event.changes.contains(where: Self.isUplinkField) {
                takeQualityUplinks(now: now, into: &actions)
            }
            return
        }
        if evaluation.modems || evaluation.wifi || evaluation.whole { takeQualityUplinks(now: now, into: &actions) }
    }

    /// A field of an event whose change may change the uplinks the estimator follows. Compared,
    /// not hashed: five short names, against the two or three an event changes.
    private static func isUplinkField(_ name: String) -> Bool {
        name == Status.Field.reachable.rawValue || name == Status.Field.primary.rawValue || name == Status.Field.vpn.rawValue
            || name == Status.Field.interfaces.rawValue || name == Status.Field.status.rawValue
    }

    /// The measured link quality's figures moved (a new RTT, the same class), or a Wi-Fi
    /// device's (signal, rate, channel: the same network, access point and bars).
    private static func figuresMoved(from before: Status, to after: Status) -> Bool {
        guard !after.isCopy(of: before) else { return false }
        return after.linkQuality != before.linkQuality || after.interfaces.map(\.linkQuality) != before.interfaces.map(\.linkQuality)
            || after.interfaces.map(\.wifi) != before.interfaces.map(\.wifi)
    }
}
