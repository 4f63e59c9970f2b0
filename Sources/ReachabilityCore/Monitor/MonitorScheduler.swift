import FoundationEssentials

/// Decides what `ReachabilityMonitor` does with everything it hears: when the status is
/// classified again, with which reason, which timer to arm, when to read the kernel again. A
/// state machine in the style of `ProbeScheduler` and `SleepCoordinator`: each event method
/// takes the input with `now` and returns the actions; the monitor performs them (classifies
/// with its `StatusTracker`, arms its Dispatch timers, dumps the kernel) and reports back.
///
/// The rules:
/// - a netlink change (link, address, route, rule) is classified at once, or `Debounce=` later;
///   changes that come only from what routers announce (their options, their routes) go through
///   `RouterAnnouncementMerge` (at most about one classification a second per interface);
/// - an overrun of the netlink socket: read the kernel again whole, then classify (`resync`);
/// - the checker's verdict, a standby uplink's, the modems, a reload, sleep and wake are
///   classified at once, and so is whatever waits for a timer: one classification takes every
///   change pending;
/// - the reason of an event belongs to the input that asked for it, and lives here, in
///   `pending`, until the classification that takes it: the strongest pending one wins
///   (`sleeping`, `resumed`, `configReloaded`, `resync`, a standby verdict's `probeResult`),
///   else the reason is derived from what changed. Nothing is left behind for a later event;
/// - sleep: the verdict and the standby verdicts are dropped (connectivity `unknown`, reason
///   `sleeping`), and no verdict counts until the wake;
/// - wake: the kernel is read again whole and classified (reason `resumed`); a verdict from a
///   check that began before the wake never counts. When that classification changed nothing
///   and a check is awaited, the first classification of a verdict from a check begun after
///   the wake that changes the status carries `resumed` (standby verdicts, links and routes
///   keep their own reasons meanwhile): one event with `resumed` per wake.
///
/// Pure: times are readings of the monitor's clock (`ClockReading`; timers use its uptime).
public struct MonitorScheduler: Sendable {
    public struct Configuration: Equatable, Sendable {
        /// `[Monitor] Debounce=` in seconds: netlink changes are classified this long after the
        /// first of them (0: at once).
        public var debounce: TimeInterval
        /// Seconds between two classifications of one interface's router announcements.
        public var announcementWindow: TimeInterval

        public init(debounce: TimeInterval = 0, announcementWindow: TimeInterval = 1) {
            self.debounce = debounce
            self.announcementWindow = announcementWindow
        }

        /// The monitor's part of `[Monitor]`.
        public init(_ monitor: ReachdConfiguration.MonitorSection) {
            self.init(debounce: Double(max(monitor.debounceMilliseconds, 0)) / 1000)
        }
    }

    /// The monitor's timers; one of each at most.
    public enum Timer: Int, Hashable, Sendable, CaseIterable {
        /// `Debounce=`: netlink changes wait for it.
        case debounce
        /// Router announcements held by the merge.
        case announcements
        /// The next lifetime of an announced option or route runs out.
        case expiry
        /// An uplink's measured quality turns stale or unknown for want of measurements.
        case quality
    }

    /// What one read of the netlink socket changed in the monitor's table.
    public struct KernelChanges: Equatable, Sendable {
        /// The indexes whose links, addresses or routes changed.
        public var touched: Set<Int> = []
        /// Of those, the indexes whose addresses or routes changed (the others saw their link change only).
        public var contents: Set<Int> = []
        /// The indexes whose routers' announcements changed (options, or routes a router announced).
        public var announced: Set<Int> = []
        /// Something besides announcements changed (a link, an address, a route, a rule).
        public var other = false
        /// The rules changed.
        public var rules = false
        /// The kernel overran the socket: messages were lost.
        public var overrun = false
        /// When the read began (uptime): the start of the timing logged at debug level.
        public var readStarted: TimeInterval?

        public init() {}
    }

    /// One classification: what changed since the last one, and the reason its event carries.
    public struct Evaluation: Equatable, Sendable {
        /// The reason the event carries; nil: derived from what changed.
        public var reason: Reason?
        /// Rebuild the whole picture (a new table, a new configuration).
        public var whole = false
        /// The indexes to read again from the table (when not whole).
        public var touched: Set<Int> = []
        /// Of those, the ones whose addresses or routes changed.
        public var contents: Set<Int> = []
        /// The modems, the rules or the primary's verdict changed.
        public var modems = false
        public var rules = false
        public var verdict = false
        /// The standby uplinks' verdicts changed (a delta: the slices stay).
        public var standby = false
        /// The uplinks' measured qualities changed (a delta: the slices stay).
        public var quality = false
        /// The Wi-Fi devices their owners report changed.
        public var wifi = false
        /// When the netlink read began that asked for it (uptime); nil when none did.
        public var readStarted: TimeInterval?

        public init(reason: Reason? = nil, whole: Bool = false, touched: Set<Int> = [], contents: Set<Int> = [],
                    modems: Bool = false, rules: Bool = false, verdict: Bool = false, standby: Bool = false,
                    quality: Bool = false, readStarted: TimeInterval? = nil) {
            self.reason = reason; self.whole = whole; self.touched = touched; self.contents = contents
            self.modems = modems; self.rules = rules; self.verdict = verdict; self.standby = standby
            self.quality = quality; self.readStarted = readStarted
        }

        /// This evaluation, with the Wi-Fi devices changed.
        func with(wifi: Bool) -> Evaluation {
            var copy = self
            copy.wifi = wifi
            return copy
        }
    }

    public enum Action: Equatable, Sendable {
        /// Classify and emit the event if the status changed; then report with `evaluated(emitted:)`
        /// before handing the event to anyone.
        case evaluate(Evaluation)
        /// Classify the kernel's state as the initial status, no event (a first start nobody watched).
        case initialize
        /// Arm `timer` to fire after this many seconds (replacing it if armed); call `timerFired`.
        case arm(Timer, after: TimeInterval)
        /// Disarm `timer`.
        case cancel(Timer)
        /// Dump the kernel's state in place of the table (keeping what routers announced that has
        /// not run out); report with `kernelReread(succeeded:nextExpiry:now:)`.
        case rereadKernel(RereadCause)
        /// The machine is going to sleep: report the status's path with `dropVerdicts(path:now:)`.
        case dropVerdicts
        /// Drop from the table what routers announced that has run out by now; report with
        /// `announcementsExpired(touched:contents:nextExpiry:now:)`.
        case expireAnnouncements
    }

    /// Why the kernel is read again (for the log, when that fails).
    public enum RereadCause: Equatable, Sendable {
        /// The netlink socket overran.
        case overrun
        /// The machine woke.
        case wake
    }

    /// An explicit reason, by strength: a classification takes the strongest one pending.
    private enum Cause: Int, Comparable {
        case quality, wifi, cost, standby, stall, resync, configReloaded, resumed, sleeping
        static func < (a: Cause, b: Cause) -> Bool { a.rawValue < b.rawValue }
    }

    /// What changed since the last classification, and the reason asked for it.
    private struct Pending {
        var whole = false
        var touched: Set<Int> = []
        var contents: Set<Int> = []
        var modems = false
        var rules = false
        var verdict = false
        var standby = false
        var quality = false
        var wifi = false
        /// Netlink changes wait for a classification (a timer, or the next input).
        var dirty = false
        /// The interfaces whose announcements alone changed (for the merge).
        var announced: Set<Int> = []
        var readStarted: TimeInterval?
        var reason: (cause: Cause, reason: Reason)?

        var isEmpty: Bool {
            !whole && touched.isEmpty && !modems && !rules && !verdict && !standby && !quality && !wifi && !dirty && announced.isEmpty
                && reason == nil
        }

        mutating func ask(_ cause: Cause, _ reason: Reason) {
            if let current = self.reason, current.cause > cause { return }
            self.reason = (cause, reason)
        }
    }

    /// Why the kernel is being read again.
    private enum Reread {
        /// The socket overran while reading `changes`.
        case overrun(KernelChanges)
        case wake(awaitingCheck: Bool)
    }

    /// Where a wake stands (nil: no wake pending).
    private enum Wake: Equatable {
        /// The wake's own classification is under way.
        case classifying(awaitingCheck: Bool)
        /// It changed nothing: the first changing verdict of a check begun after the wake carries `resumed`.
        case awaitingCheck
        /// That verdict's classification is under way.
        case classifyingCheck
    }

    public private(set) var configuration: Configuration
    /// Between `start` and `stop`.
    public private(set) var running = false
    /// `start` ran once: the status has numbered events someone may have seen.
    private var everStarted = false
    /// What the monitor was told that its table does not hold: classified with the table.
    public struct Reported: Equatable, Sendable {
        /// The modems ModemManager reports.
        public var modems: [ModemState] = []
        /// The checker's verdict (nil: none, or dropped by a sleep) and the path it is about.
        public var probe: Probe?
        public var probePath: ProbePath?
        /// The standby uplinks' verdicts by interface index.
        public var standbyVerdicts: [Int: Probe] = [:]
        /// Each uplink's measured quality by interface index (the estimator's, or none when
        /// `[LinkQuality] Enabled=no`).
        public var linkQualities: [Int: LinkQuality] = [:]
        /// `[LinkQuality] Enabled=`.
        public var measuresQuality = true
        /// The data stalls suspected, by uplink index.
        public var dataStalls: [Int: DataStall] = [:]
        /// The Wi-Fi devices their owners report.
        public var wifi: [WiFiDevice] = []

        public init() {}
    }

    /// How good each uplink is, from what the monitor hands over (`qualityUplinks`,
    /// `qualityMeasured`, the verdicts' RTTs).
    public private(set) var quality = LinkQualityEstimator()
    /// `[LinkQuality] Enabled=`.
    public private(set) var measuresQuality = true

    public private(set) var reported = Reported()
    public var modems: [ModemState] { reported.modems }
    public var wifi: [WiFiDevice] { reported.wifi }
    public var probe: Probe? { reported.probe }
    public var probePath: ProbePath? { reported.probePath }
    public var standbyVerdicts: [Int: Probe] { reported.standbyVerdicts }
    /// The timers armed, with their deadlines (uptime).
    public private(set) var armed: [Timer: TimeInterval] = [:]
    /// Between `sleep` and `wake`.
    public private(set) var asleep = false
    /// When the machine last woke (uptime): verdicts of checks begun before it do not count.
    public private(set) var lastWake: TimeInterval?
    private var pending = Pending()
    private var merge: RouterAnnouncementMerge
    /// The deadline the expiry timer is armed for.
    private var expiryDeadline: TimeInterval?
    private var reread: Reread?
    private var wake: Wake?

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        merge = RouterAnnouncementMerge(window: configuration.announcementWindow)
    }

    /// A verdict of a check that began at `began` (uptime) counts: the machine is awake and the
    /// check began after the last wake. Withdrawals (nil) always count.
    public func counts(began: TimeInterval) -> Bool {
        !asleep && (lastWake.map { began >= $0 } ?? true)
    }

    // MARK: Start and stop

    /// The monitor read the kernel's state afresh and listens. `observed`: someone already saw a
    /// state (observers registered before the first start): they are told the difference with
    /// `resync`, as after every later start.
    public mutating func start(observed: Bool, now: ClockReading) -> [Action] {
        running = true
        expiryDeadline = nil
        reread = nil
        let announce = everStarted || observed
        everStarted = true
        pending = Pending()
        guard announce else { return [.initialize] }
        pending.whole = true
        pending.ask(.resync, Reason(code: .resync, detail: "state read from the kernel"))
        return evaluate(now: now)
    }

    /// The monitor stopped listening: every timer is disarmed; nothing waits for a classification.
    public mutating func stop() -> [Action] {
        running = false
        let actions = Timer.allCases.filter { armed[$0] != nil }.map { Action.cancel($0) }
        armed = [:]
        expiryDeadline = nil
        reread = nil
        pending.dirty = false
        pending.readStarted = nil
        return actions
    }

    // MARK: The kernel

    /// A read of the netlink socket applied `changes` to the table; `nextExpiry` is the table's
    /// next announcement deadline now.
    public mutating func kernelChanged(_ changes: KernelChanges, nextExpiry: TimeInterval?, now: ClockReading) -> [Action] {
        guard running else { return [] }
        pending.touched.absorb(changes.touched)
        pending.contents.absorb(changes.contents)
        if changes.rules { pending.rules = true }
        if changes.overrun {
            reread = .overrun(changes)
            return [.rereadKernel(.overrun)]
        }
        // An option that changed nothing shown may still move a deadline (an advertisement that
        // comes without the captive-portal URI its router announced ends it a little later).
        var actions: [Action] = []
        expiry(nextExpiry, now: now, into: &actions)
        if changes.other {
            pending.dirty = true
            if pending.readStarted == nil { pending.readStarted = changes.readStarted }
            scheduleEvaluation(now: now, into: &actions)
        } else if !changes.announced.isEmpty {
            // Router announcements alone: at most about one classification a second per interface.
            pending.dirty = true
            announcementsChanged(changes.announced, now: now, into: &actions)
        }
        return actions
    }

    /// The re-read asked by `.rereadKernel` is done (or failed: the table is as it was).
    public mutating func kernelReread(succeeded: Bool, nextExpiry: TimeInterval?, now: ClockReading) -> [Action] {
        guard let cause = reread else { return [] }
        reread = nil
        var actions: [Action] = []
        expiry(nextExpiry, now: now, into: &actions)
        if succeeded { pending.whole = true }
        switch cause {
        case .overrun(let changes):
            if succeeded {
                pending.dirty = true
                pending.ask(.resync, Reason(code: .resync, detail: "netlink socket overrun; state re-read from the kernel"))
            }
            if changes.other || !changes.announced.isEmpty { pending.dirty = true }
            guard pending.dirty else { return actions }
            if pending.readStarted == nil { pending.readStarted = changes.readStarted }
            scheduleEvaluation(now: now, into: &actions)
        case .wake(let awaitingCheck):
            // Connectivity comes back only from a check after the wake.
            reported.probe = nil
            pending.verdict = true
            pending.ask(.resumed, Reason(code: .resumed, detail: "woke from sleep; state re-read from the kernel"))
            evaluate(now: now, into: &actions)
            wake = .classifying(awaitingCheck: awaitingCheck)
        }
        return actions
    }

    /// The expiry timer's `.expireAnnouncements` is done: the announcements of `touched` ran out.
    public mutating func announcementsExpired(touched: Set<Int>, contents: Set<Int>, nextExpiry: TimeInterval?,
                                              now: ClockReading) -> [Action] {
        pending.touched.absorb(touched)
        pending.contents.absorb(contents)
        var actions: [Action] = []
        if !touched.isEmpty {
            pending.dirty = true
            announcementsChanged(touched, now: now, into: &actions)
        }
        expiry(nextExpiry, now: now, into: &actions)
        return actions
    }

    // MARK: What others tell the monitor

    /// The checker's verdict about `path` (nil: not checked; nil path: not reachable), from a
    /// check that began at `began` (uptime; nil: now). A verdict from before the last wake, or
    /// while asleep, is dropped.
    /// `reason`: the reason its event carries instead of the derived one (a check made because
    /// of a data stall).
    public mutating func verdict(_ probe: Probe?, path: ProbePath?, began: TimeInterval?, reason: Reason? = nil,
                                 now: ClockReading) -> [Action] {
        if probe != nil, !counts(began: began ?? now.uptime) { return [] }
        if let reason { pending.ask(.stall, reason) }
        reported.probe = probe
        reported.probePath = path
        pending.verdict = true
        if let path, let rtt = probe?.rttMs, rtt.isFinite, rtt > 0 {
            quality.probed(index: path.index, rttMs: LinkQualityEstimator.checkRTT(ofRoundTripMs: rtt), now: now)
            takeQualities()
        }
        var checkAfterWake = false
        if probe != nil, wake == .awaitingCheck {
            checkAfterWake = true
            pending.ask(.resumed, Reason(code: .resumed, detail: "woke from sleep; connectivity checked afresh"))
        }
        let actions = evaluate(now: now)
        if checkAfterWake { wake = .classifyingCheck }
        return actions
    }

    /// A standby uplink's verdict (nil: no longer checked), from a check that began at `began`;
    /// `interface` names it in the reason. Shown as that interface's connectivity.
    public mutating func standbyVerdict(_ probe: Probe?, index: Int, interface: String?, began: TimeInterval?,
                                        reason: Reason? = nil, now: ClockReading) -> [Action] {
        guard reported.standbyVerdicts[index] != probe else { return [] }
        if probe != nil, !counts(began: began ?? now.uptime) { return [] }
        if let rtt = probe?.rttMs, rtt.isFinite, rtt > 0 {
            quality.probed(index: index, rttMs: LinkQualityEstimator.checkRTT(ofRoundTripMs: rtt), now: now)
            takeQualities()
        }
        reported.standbyVerdicts[index] = probe
        pending.standby = true
        pending.ask(.standby, Reason(code: .probeResult, interface: interface, detail: "standby uplink"))
        if let reason { pending.ask(.stall, reason) }
        return evaluate(now: now)
    }

    /// The data stalls suspected now, for the classification that the next input makes.
    public mutating func takeStalls(_ stalls: [Int: DataStall]) {
        guard stalls != reported.dataStalls else { return }
        reported.dataStalls = stalls
        pending.quality = true
    }

    /// The data stalls suspected now (a delta, like the qualities: the slices stay); `reason`
    /// (`dataStall`) is the event's unless a stronger one is pending.
    public mutating func stallsChanged(_ stalls: [Int: DataStall], reason: Reason, now: ClockReading) -> [Action] {
        guard stalls != reported.dataStalls else { return [] }
        reported.dataStalls = stalls
        pending.quality = true
        pending.ask(.stall, reason)
        return evaluate(now: now)
    }

    /// ModemManager's modems (reason `modemChanged`, derived).
    public mutating func modemsChanged(_ modems: [ModemState], now: ClockReading) -> [Action] {
        reported.modems = modems
        pending.modems = true
        return evaluate(now: now)
    }

    /// The Wi-Fi devices their owners report, arbitrated. A new access point of the same
    /// network is reason `roamed`, other bars on the same one `wifiSignalChanged`, another
    /// network (or none) `wifiChanged`; figures alone (signal, rate, channel) classify quietly:
    /// the status takes them, no event is made for them.
    public mutating func wifiChanged(_ devices: [WiFiDevice], now: ClockReading) -> [Action] {
        let old = reported.wifi
        guard devices != old else { return [] }
        reported.wifi = devices
        pending.wifi = true
        if let reason = Self.wifiReason(from: old, to: devices) { pending.ask(.wifi, reason) }
        return evaluate(now: now)
    }

    /// The reason of the most telling Wi-Fi change between two reports: a network joined, left
    /// or switched before a roam, a roam before new bars; nil when only figures moved.
    static func wifiReason(from old: [WiFiDevice], to new: [WiFiDevice]) -> Reason? {
        var best: (rank: Int, reason: Reason)?
        let names = Set(old.map(\.interface)).union(new.map(\.interface)).sorted()
        for name in names {
            let oldDevice = old.first { $0.interface == name }, newDevice = new.first { $0.interface == name }
            let before = oldDevice?.station, after = newDevice?.station
            let candidate: (Int, Reason)
            switch WiFiChange.between(before, after) {
            case .none, .figures:
                // An owner that takes or lets go of the device changes its kind.
                guard (oldDevice?.isManagedAsWiFi ?? false) != (newDevice?.isManagedAsWiFi ?? false) else { continue }
                candidate = (0, Reason(code: .wifiChanged, interface: name,
                                       detail: newDevice.map { "managed by \($0.owner.rawValue)" } ?? "no Wi-Fi owner"))
            case .joined, .left, .switched:
                candidate = (0, Reason(code: .wifiChanged, interface: name, detail: after?.ssid.map { "network \($0.display)" }))
            case .roamed:
                candidate = (1, Reason(code: .roamed, interface: name, detail: after?.ssid.map { "network \($0.display)" }))
            case let .bars(from, to):
                candidate = (2, Reason(code: .wifiSignalChanged, interface: name,
                                       detail: "\(from.map(String.init) ?? "no") to \(to.map(String.init) ?? "no") bars"))
            }
            if best.map({ candidate.0 < $0.rank }) ?? true { best = candidate }
        }
        return best?.reason
    }

    /// What the network says about the cost of link `index` changed (its DHCP lease,
    /// NetworkManager's guess; the monitor cleared that link's verdict): the link is classified
    /// again at once, its addresses and routes as they were. `reason` names the source; any
    /// other explicit reason pending wins over it.
    public mutating func linkCostChanged(index: Int, reason: Reason, now: ClockReading) -> [Action] {
        pending.touched.insert(index)
        pending.ask(.cost, reason)
        return evaluate(now: now)
    }

    /// A new configuration is in force (the monitor cleared what it decided from the old one).
    public mutating func reconfigured(_ configuration: Configuration, now: ClockReading) -> [Action] {
        self.configuration = configuration
        pending.whole = true
        pending.ask(.configReloaded, Reason(code: .configReloaded))
        return evaluate(now: now)
    }

    /// The machine is about to sleep: the verdicts are dropped (connectivity `unknown`, reason
    /// `sleeping`) and none counts until the wake. Whatever waits for a timer is classified
    /// first, with its own reason; then `.dropVerdicts` asks for the path the status has.
    public mutating func sleep(now: ClockReading) -> [Action] {
        asleep = true
        // What was measured before the sleep says nothing of the network after it.
        quality.forgetSamples()
        wake = nil
        var actions: [Action] = []
        if !pending.isEmpty { evaluate(now: now, into: &actions) }
        actions.append(.dropVerdicts)
        return actions
    }

    /// The status's path as the sleep finds it (`.dropVerdicts`): the dropped verdict is said to
    /// be about it, so that no older verdict stays in its place (a failover's standby verdict,
    /// or one of a path the checker had not seen yet).
    public mutating func dropVerdicts(path: ProbePath?, now: ClockReading) -> [Action] {
        reported.probe = nil
        reported.probePath = path
        pending.verdict = true
        if !reported.dataStalls.isEmpty {
            // Traffic before the sleep says nothing of the network after it.
            reported.dataStalls = [:]
            pending.quality = true
        }
        if !reported.standbyVerdicts.isEmpty {
            // What the standby checks said before the sleep says nothing after it.
            reported.standbyVerdicts = [:]
            pending.standby = true
        }
        pending.ask(.sleeping, Reason(code: .sleeping, detail: "the machine is going to sleep"))
        return evaluate(now: now)
    }

    /// The machine woke: the kernel is read again whole (what changed while asleep sent no
    /// message anyone read in time), then classified with `resumed`. `awaitingCheck`: a fresh
    /// check follows, whose event carries `resumed` when the re-read changed nothing.
    public mutating func wake(awaitingCheck: Bool, now: ClockReading) -> [Action] {
        asleep = false
        lastWake = now.uptime
        wake = nil
        guard running else { return [] }
        reread = .wake(awaitingCheck: awaitingCheck)
        return [.rereadKernel(.wake)]
    }

    /// A classification asked by `.evaluate` is done; `emitted`: it changed the status (an event).
    public mutating func evaluated(emitted: Bool) {
        switch wake {
        case .classifying(let awaitingCheck)?:
            wake = awaitingCheck && !emitted ? .awaitingCheck : nil
        case .classifyingCheck?:
            wake = emitted ? nil : .awaitingCheck
        case .awaitingCheck?, nil:
            break
        }
    }

    /// The timer armed by `.arm` fired.
    public mutating func timerFired(_ timer: Timer, now: ClockReading) -> [Action] {
        guard armed.removeValue(forKey: timer) != nil else { return [] }
        switch timer {
        case .debounce:
            return evaluate(now: now)
        case .announcements:
            var actions: [Action] = []
            switch merge.timerFired(now: now.uptime) {
            case .evaluate: scheduleEvaluation(now: now, into: &actions)
            case .hold(let until): arm(.announcements, at: until + Self.announcementSlack, now: now, into: &actions)
            case .none: break
            }
            return actions
        case .expiry:
            expiryDeadline = nil
            return [.expireAnnouncements]
        case .quality:
            return qualityChanged(quality.tick(now: now), now: now)
        }
    }

    // MARK: Link quality

    /// The uplinks now (after a classification): new ones start with their technology's
    /// class, gone ones are forgotten, each one's radio is taken. A class that changed is an
    /// event (`qualityChanged`).
    public mutating func qualityUplinks(_ uplinks: [QualityUplink], now: ClockReading) -> [Action] {
        guard measuresQuality else { return [] }
        let known = Set(quality.indexes)
        // A new uplink starts with the class the classifier already gave it (the same guess, or
        // its radio's), and one that went has none there: only a known uplink whose class moved
        // (its radio, its modem's generation) needs another classification.
        let changed = quality.uplinks(uplinks, now: now).intersection(known).intersection(uplinks.map(\.index))
        let asked = pending.quality
        takeQualities()
        if changed.isEmpty {
            // The figures of uplinks that came or went ride along with the next classification;
            // they ask for none of their own.
            pending.quality = asked
            return armQualityTimer(now: now)
        }
        return qualityChanged(changed, now: now)
    }

    /// One passive dump of the apps' sockets. Dropped while asleep.
    public mutating func qualityMeasured(_ dump: QualityDump, now: ClockReading) -> [Action] {
        guard measuresQuality, !asleep else { return [] }
        return qualityChanged(quality.measured(dump, now: now), now: now)
    }

    /// `[LinkQuality]`: on or off, and the estimator's times.
    public mutating func qualityConfigured(enabled: Bool, configuration: LinkQualityEstimator.Configuration,
                                           now: ClockReading) -> [Action] {
        quality.reconfigure(configuration)
        guard enabled != measuresQuality else { return [] }
        measuresQuality = enabled
        if !enabled { quality = LinkQualityEstimator(configuration: configuration) }
        let had = !reported.linkQualities.isEmpty
        takeQualities()
        var actions: [Action] = []
        if !enabled, armed.removeValue(forKey: .quality) != nil { actions.append(.cancel(.quality)) }
        guard had else { return actions }
        pending.whole = true
        evaluate(now: now, into: &actions)
        return actions
    }

    /// The estimator's figures, for the next classification (which takes them as a delta).
    private mutating func takeQualities() {
        let qualities = measuresQuality ? quality.qualities : [:]
        if qualities != reported.linkQualities || measuresQuality != reported.measuresQuality { pending.quality = true }
        reported.linkQualities = qualities
        reported.measuresQuality = measuresQuality
    }

    /// The estimator's figures are taken; `changed` (uplinks whose class changed) makes the
    /// classification an event with reason `qualityChanged`, new figures alone a quiet one.
    /// Figures that did not move (a dump of idle sockets) classify nothing.
    private mutating func qualityChanged(_ changed: Set<Int>, now: ClockReading) -> [Action] {
        takeQualities()
        var actions = armQualityTimer(now: now)
        if let first = changed.min() {
            pending.ask(.quality, Reason(code: .qualityChanged, interface: quality.name(of: first)))
            pending.quality = true
        }
        guard pending.quality else { return actions }
        evaluate(now: now, into: &actions)
        return actions
    }

    /// The quality timer follows the estimator's next deadline (stale, unknown). A timer armed
    /// for an earlier deadline stays: when it fires the tick finds nothing due and arms the next
    /// one, which costs less than moving a Dispatch timer each time an uplink comes or goes.
    private mutating func armQualityTimer(now: ClockReading) -> [Action] {
        var actions: [Action] = []
        let next = measuresQuality ? quality.nextDeadline : nil
        guard next != armed[.quality] else { return actions }
        if measuresQuality, let early = armed[.quality], next.map({ $0 > early }) ?? true { return actions }
        if armed.removeValue(forKey: .quality) != nil { actions.append(.cancel(.quality)) }
        if let next { arm(.quality, at: max(next, now.uptime), now: now, into: &actions) }
        return actions
    }

    // MARK: Deciding

    /// A timer for announcements fires this long after their deadline, so that what runs out at
    /// it has run out (and the merge's window has passed).
    static let expirySlack: TimeInterval = 0.005
    static let announcementSlack: TimeInterval = 0.001

    /// Announcements alone changed on `indexes`: classify now, or hold them for the merge timer.
    private mutating func announcementsChanged(_ indexes: Set<Int>, now: ClockReading, into actions: inout [Action]) {
        pending.announced.absorb(indexes)
        switch merge.announced(indexes, now: now.uptime) {
        case .evaluate: scheduleEvaluation(now: now, into: &actions)
        case .hold(let until): arm(.announcements, at: until + Self.announcementSlack, now: now, into: &actions)
        case .none: break
        }
    }

    /// Netlink changes: classify now, or when `Debounce=` has passed since the first of them.
    private mutating func scheduleEvaluation(now: ClockReading, into actions: inout [Action]) {
        guard configuration.debounce > 0 else { return evaluate(now: now, into: &actions) }
        guard armed[.debounce] == nil else { return }
        arm(.debounce, at: now.uptime + configuration.debounce, now: now, into: &actions)
    }

    /// Classify now: everything pending goes out with it, held announcements included.
    private mutating func evaluate(now: ClockReading) -> [Action] {
        var actions: [Action] = []
        evaluate(now: now, into: &actions)
        return actions
    }

    private mutating func evaluate(now: ClockReading, into actions: inout [Action]) {
        if !armed.isEmpty {
            if armed.removeValue(forKey: .debounce) != nil { actions.append(.cancel(.debounce)) }
            if armed.removeValue(forKey: .announcements) != nil { actions.append(.cancel(.announcements)) }
        }
        merge.evaluated(pending.announced, now: now.uptime)
        let evaluation = Evaluation(reason: pending.reason?.reason, whole: pending.whole, touched: pending.touched,
                                    contents: pending.contents, modems: pending.modems, rules: pending.rules,
                                    verdict: pending.verdict, standby: pending.standby, quality: pending.quality,
                                    readStarted: pending.readStarted).with(wifi: pending.wifi)
        pending = Pending()
        actions.append(.evaluate(evaluation))
    }

    /// The expiry timer follows the table's next deadline.
    private mutating func expiry(_ next: TimeInterval?, now: ClockReading, into actions: inout [Action]) {
        guard running, next != expiryDeadline || (next != nil && armed[.expiry] == nil) else { return }
        if armed.removeValue(forKey: .expiry) != nil { actions.append(.cancel(.expiry)) }
        expiryDeadline = next
        guard let next else { return }
        arm(.expiry, at: next + Self.expirySlack, now: now, into: &actions)
    }

    private mutating func arm(_ timer: Timer, at deadline: TimeInterval, now: ClockReading, into actions: inout [Action]) {
        armed[timer] = deadline
        actions.append(.arm(timer, after: max(0, deadline - now.uptime)))
    }
}

extension Set {
    /// `formUnion`, without hashing anything when this set is empty (it takes the other's storage).
    fileprivate mutating func absorb(_ other: Set<Element>) {
        if isEmpty { self = other } else if !other.isEmpty { formUnion(other) }
    }
}
