import CNetlink
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a live picture of links, addresses and routes from netlink and emits a
/// `ReachabilityEvent` the moment the machine's `Status` changes.
///
/// One raw libnl socket, subscribed to the link, IPv4/IPv6 address, route and rule groups,
/// is waited on by a thread of its own (`ReadinessThread`, blocked in `poll` as `ip monitor` is in
/// `recvmsg`), which then drains it on `queue` (`queue.sync`). Each time the socket is readable the monitor
/// drains it (one `recvfrom` per datagram until EAGAIN, messages decoded in place), applies every
/// message to its `KernelStateTable` and
/// classifies once, so a burst of messages yields at most one event. The socket subscribes
/// before the monitor dumps the kernel's state, so nothing falls between the two. When messages
/// are lost (ENOBUFS: the kernel overran the socket) the monitor keeps draining, re-dumps
/// everything and reports the difference with reason `resync`.
///
/// One serial queue owns all state; observers are called on that queue and must not block it.
/// `status`, `overrunCount` and `configuration` are readable from any thread.
public final class ReachabilityMonitor: @unchecked Sendable, QueueConfined {
    /// What the monitor watches and how it names things.
    public struct Configuration: Sendable {
        /// Where sysfs is mounted; tests point it at a fake tree.
        public var sysfsRoot: String = "/sys"
        /// `[Monitor]`: ignored interfaces and the hold-down before a change is evaluated.
        public var monitor = ReachdConfiguration.MonitorSection()
        /// `[Interfaces]`: forced kinds and metered interfaces.
        public var interfaces = ReachdConfiguration.InterfacesSection()
        /// The sequence number of the initial state (see `StatusTracker`).
        public var firstSequence: Int = 0
        /// The network namespace (a name under /run/netns or an absolute path) whose sockets the
        /// monitor opens; nil for the caller's own. Tests run the monitor against their namespaces.
        public var networkNamespace: String? = nil
        /// The netlink socket's receive buffer in bytes. Big, so that bursts do not overrun it;
        /// tests make it small to provoke overruns.
        public var receiveBufferSize: Int = 8 << 20
        /// `[Connectivity] Enabled=`: whether statuses say the internet is checked
        /// (`Status.connectivityCheck`); the checker itself is reachd's.
        public var connectivityCheck = true

        public init() {}
    }

    /// Identifies an observer for `removeObserver`.
    public struct ObserverToken: Hashable, Sendable { let id: Int }

    /// The serial queue that owns all state; observers run on it.
    public let queue: DispatchQueue

    // MARK: State published for other threads (the only lock; the queue owns everything else).

    private struct Published {
        var status: Status
        var overruns = 0
        var configuration: Configuration
    }
    private let published: Mutex<Published>

    /// The current status; safe from any thread. Code on `queue` (observers, and whatever shares
    /// the queue) reads the monitor's own, without taking the lock other threads take.
    public var status: Status {
        if queueConfinement.isCurrent { return tracker.status }
        return published.withLock { $0.status }
    }
    /// How many times the kernel overran the netlink socket (each one followed by a re-dump).
    public var overrunCount: Int { published.withLock { $0.overruns } }
    /// The configuration in force.
    public var configuration: Configuration { published.withLock { $0.configuration } }

    // MARK: Queue-confined state.

    package let queueConfinement: QueueConfinement
    private var config: Configuration
    var tracker: StatusTracker
    var table = KernelStateTable()
    /// Per link index: the decided kind and the configuration's verdicts, cached until the link is renamed.
    var linkVerdicts: [Int: LinkVerdict] = [:]
    private var modems: [ModemState] = []
    var probe: Probe?
    private var probePath: ProbePath?
    /// The standby check's verdicts by interface index (`setStandbyProbe`).
    var standbyVerdicts: [Int: Probe] = [:]
    var socket: NetlinkSocket?
    private var reader: ReadinessThread?
    private var observers: [Int: @Sendable (ReachabilityEvent) -> Void] = [:]
    private var streams: [Int: AsyncStream<ReachabilityEvent>.Continuation] = [:]
    private var nextObserverID = 0
    /// Messages were applied since the last classification.
    var dirty = false
    /// The indexes whose links, addresses or routes messages changed since the last classification.
    private var touched: Set<Int> = []
    /// Of those, the indexes whose addresses or routes changed (the others saw their link change only).
    private var contentsTouched: Set<Int> = []
    /// The tracker's picture must be rebuilt whole (new table, new configuration, first start).
    var rebuild = true
    /// The modems, the rules or the checker's verdict changed since the last classification.
    private var modemsChanged = false
    private var rulesChanged = false
    var verdictChanged = false
    /// The reason the next event must carry (resync after an overrun), overriding the derived one.
    var pendingReason: Reason?
    /// Warnings about datagrams from other processes: a few, then one a minute.
    private var foreignLog = LogRateLimiter(burst: 3, interval: 60)
    /// Notices about malformed router advertisement options (anyone on the link can send them).
    private var optionLog = LogRateLimiter(burst: 10, interval: 60)
    /// Folds changes that come only from router advertisement options (`RouterAnnouncementMerge`).
    private var announcementMerge = RouterAnnouncementMerge()
    /// Interfaces whose announcements changed since the last classification.
    private var announcedSinceEvaluation: Set<Int> = []
    /// In the drain under way: what changed besides announcements, and whose announcements changed.
    private var drainChangedOther = false
    private var drainAnnounced: Set<Int> = []
    /// Fires when held announcements are due (`announcementMerge.nextDeadline`).
    private var mergeTimer: DispatchSourceTimer?
    /// Fires when the next router advertisement option runs out (`KernelStateTable.nextAnnouncementDeadline`).
    private var expiryTimer: DispatchSourceTimer?
    private var expiryDeadline: Double?
    /// When the read began that made the state dirty: the start of the timing logged at debug level.
    private var dirtyReadStarted: UInt64?
    /// A hold-down evaluation is scheduled; `generation` invalidates it on stop/restart.
    private var evaluationScheduled = false
    private var generation = 0
    /// `start()` succeeded once: the tracker holds a real state whose numbering must go on.
    private var hasStarted = false
    let log: LogSink

    struct LinkVerdict {
        let name: String
        let kind: InterfaceKind
        let metered: Bool
        let ignored: Bool
    }

    /// - Parameter log: takes the failures of the netlink socket (reachd passes its sink).
    public init(configuration: Configuration = Configuration(), queue: DispatchQueue = DispatchQueue(label: "reachd.monitor"),
                log: LogSink = .standardError()) {
        self.queue = queue
        self.log = log
        self.config = configuration
        var nothingYet = NetworkSnapshot()
        nothingYet.connectivityCheck = configuration.connectivityCheck
        let tracker = StatusTracker(snapshot: nothingYet, firstSequence: configuration.firstSequence)
        self.tracker = tracker
        self.published = Mutex(Published(status: tracker.status, configuration: configuration))
        self.queueConfinement = QueueConfinement(queue)
    }

    deinit {
        reader?.stop()
    }

    /// Subscribes to the rtnetlink groups, then dumps links, addresses and routes; the initial
    /// status is ready when it returns. The initial state is no event (ask `initialEvent()`, or
    /// use `events()`) — except for observers registered before the first start, or after a
    /// `stop()`, who saw an older state: they get one event with reason `resync`.
    /// Calling it while running does nothing. Throws `NetlinkError` or `NetworkNamespaceError`.
    public func start() throws {
        try onQueue {
            guard socket == nil else { return }
            let configuration = config
            let socket = try NetworkNamespace.run(in: configuration.networkNamespace) { () throws -> NetlinkSocket in
                let socket = try NetlinkSocket()
                try socket.setNonBlocking()
                try socket.setReceiveBufferSize(configuration.receiveBufferSize)
                try socket.addMemberships([RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
                                           RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_RULE,
                                           RTNLGRP_ND_USEROPT])
                return socket
            }
            // Subscribed first: whatever changes during the dump is queued on `socket` and applied after it.
            table = try dumpKernelState()
            linkVerdicts = [:]
            dirty = false
            rebuild = true
            if hasStarted || !observers.isEmpty || !streams.isEmpty {
                // Someone already saw a state (empty before the first start, stale after a stop):
                // tell them what the kernel says now, as a numbered event.
                pendingReason = Reason(code: .resync, detail: "state read from the kernel")
                evaluate()
            } else {
                pendingReason = nil
                tracker = StatusTracker(snapshot: makeSnapshot(), firstSequence: config.firstSequence)
                clearChanges()
                publish()
            }
            hasStarted = true
            // The reader thread drains on `queue` with `sync`: the thread the kernel woke does the
            // work, without the hand-over a Dispatch read source costs (Dispatch's manager thread
            // waking a worker). It keeps the socket (and its fd) alive until it has ended.
            let identity = ObjectIdentifier(socket)
            let queue = self.queue
            let reader = try ReadinessThread(fileDescriptor: socket.fileDescriptor, keepAlive: socket,
                                             name: "reachd.netlink") { [weak self] in
                queue.sync {
                    // A reader outlived by a restart must not drain its successor's socket.
                    guard let self, let current = self.socket, ObjectIdentifier(current) == identity else { return }
                    self.drain()
                }
            }
            self.socket = socket
            self.reader = reader
            reader.start()
        }
    }

    /// Stops watching; observers stay registered, `events()` streams finish. `start()` may be called again.
    public func stop() {
        onQueue {
            reader?.stop()
            reader = nil
            socket = nil
            generation += 1
            expiryTimer?.cancel()
            expiryTimer = nil
            expiryDeadline = nil
            mergeTimer?.cancel()
            mergeTimer = nil
            evaluationScheduled = false
            for continuation in streams.values { continuation.finish() }
            streams = [:]
        }
    }

    /// The current status as the event `initial`, with the current sequence number.
    public func initialEvent() -> ReachabilityEvent {
        onQueue { tracker.initialEvent() }
    }

    /// Registers `handler`, called on `queue`, in order, for every event emitted from now on.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) -> ObserverToken {
        onQueue {
            nextObserverID += 1
            observers[nextObserverID] = handler
            return ObserverToken(id: nextObserverID)
        }
    }

    public func removeObserver(_ token: ObserverToken) {
        onQueue {
            observers[token.id] = nil
            streams[token.id] = nil
        }
    }

    /// The events as an async sequence: first the current state (`initial`), then every change.
    /// It finishes when the monitor stops; ending the iteration unregisters it.
    public func events() -> AsyncStream<ReachabilityEvent> {
        let (stream, continuation) = AsyncStream<ReachabilityEvent>.makeStream(bufferingPolicy: .unbounded)
        onQueue {
            continuation.yield(tracker.initialEvent())
            nextObserverID += 1
            let id = nextObserverID
            streams[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.removeObserver(ObserverToken(id: id)) }
        }
        return stream
    }

    /// The connectivity checker's latest verdict about `path` (nil: the checker saw the machine
    /// not reachable); re-classifies at once (reason `probeResult`). A verdict counts only while
    /// the status's path is `path` (see `ConnectivityRule`).
    public func setProbe(_ probe: Probe?, path: ProbePath?) {
        onQueue {
            self.probe = probe
            self.probePath = path
            verdictChanged = true
            evaluate()
        }
    }

    /// The ModemManager source's modems; re-classifies at once (reason `modemChanged`).
    public func setModems(_ modems: [ModemState]) {
        onQueue {
            self.modems = modems
            modemsChanged = true
            evaluate()
        }
    }

    /// Applies a new configuration (kinds, metered, ignored, debounce); re-classifies with reason
    /// `configReloaded`. The namespace, buffer size and sequence numbering of a running monitor stay.
    public func reconfigure(_ configuration: Configuration) {
        onQueue {
            var next = configuration
            if socket != nil {
                next.networkNamespace = config.networkNamespace
                next.receiveBufferSize = config.receiveBufferSize
            }
            next.firstSequence = config.firstSequence
            config = next
            published.withLock { $0.configuration = next }
            linkVerdicts = [:]
            rebuild = true
            pendingReason = Reason(code: .configReloaded)
            evaluate()
        }
    }

    // MARK: Netlink

    /// One message read by `drain()`, on `queue`.
    private func handle(_ message: UnsafeRawBufferPointer) {
        for change in NetlinkMessageDecoder.changes(in: message) {
            // A new link may reuse the index and name of a deleted one: decide its kind afresh.
            switch change {
            case .linkRemoved(let index): linkVerdicts[index] = nil
            case .ruleAdded, .ruleRemoved: rulesChanged = true
            case .routerOption(var option):
                option.receivedAt = Self.clock()
                // A refreshed lifetime alone touches nothing: no classification at all.
                var announced: Set<Int> = [], contents: Set<Int> = []
                table.apply(.routerOption(option), touching: &announced, contents: &contents)
                guard !announced.isEmpty else { continue }
                touched.formUnion(announced)
                contentsTouched.formUnion(contents)
                drainAnnounced.formUnion(announced)
                dirty = true
                continue
            case .routerOptionRejected(let index, let error):
                let (allowed, suppressed) = optionLog.admit(now: Self.clock())
                if allowed {
                    log.notice("ignored a \(error) on \(table.links[index]?.name ?? "interface \(index)")"
                               + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
                }
                continue
            case .routeAdded(let route, _) where route.fromRouterAdvertisement,
                 .routeRemoved(let route) where route.fromRouterAdvertisement:
                // A router on the link added or withdrew it (a new link-local source is a new
                // router, and a new route): merged like the advertisements' options.
                var announced: Set<Int> = []
                table.apply(change, touching: &announced, contents: &contentsTouched)
                touched.formUnion(announced)
                drainAnnounced.formUnion(announced)
                if !announced.isEmpty { dirty = true }
                continue
            case .link, .addressAdded, .addressRemoved, .routeAdded, .routeRemoved: break
            }
            table.apply(change, touching: &touched, contents: &contentsTouched)
            drainChangedOther = true
            dirty = true
        }
    }

    /// Seconds of CLOCK_BOOTTIME: router advertisement lifetimes run on while the machine sleeps.
    static func clock() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Arms the timer for the next announcement to run out (or disarms it); on `queue`.
    private func armExpiryTimer() {
        let next = table.nextAnnouncementDeadline
        guard next != expiryDeadline || (next != nil && expiryTimer == nil) else { return }
        expiryTimer?.cancel()
        expiryTimer = nil
        expiryDeadline = next
        guard let next, socket != nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let delay = max(0, next - Self.clock())
        // A little after the deadline, so that what runs out at it has run out.
        timer.schedule(deadline: .now() + .milliseconds(Int((delay * 1000).rounded(.up)) + 5))
        let scheduledGeneration = generation
        timer.setEventHandler { [weak self] in
            guard let self, self.generation == scheduledGeneration else { return }
            self.expiryTimer?.cancel()
            self.expiryTimer = nil
            self.expiryDeadline = nil
            var ranOut: Set<Int> = [], contents: Set<Int> = []
            self.table.expireAnnouncements(now: Self.clock(), touching: &ranOut, contents: &contents)
            self.touched.formUnion(ranOut)
            self.contentsTouched.formUnion(contents)
            if ranOut.isEmpty { self.armExpiryTimer(); return }
            self.dirty = true
            self.announcementsChanged(ranOut)
            // Held by the merge: what runs out next still gets its timer.
            self.armExpiryTimer()
        }
        expiryTimer = timer
        timer.resume()
    }

    /// Announcements alone changed on `indexes` (the table holds them): classify now, or hold
    /// them for the merge timer.
    private func announcementsChanged(_ indexes: Set<Int>) {
        announcedSinceEvaluation.formUnion(indexes)
        switch announcementMerge.announced(indexes, now: Self.clock()) {
        case .evaluate: scheduleEvaluation()
        case .hold(let until): armMergeTimer(until)
        case .none: break
        }
    }

    /// Arms the merge timer for `deadline` (CLOCK_BOOTTIME seconds), replacing an armed one.
    private func armMergeTimer(_ deadline: Double) {
        mergeTimer?.cancel()
        guard socket != nil else { mergeTimer = nil; return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let delay = max(0, deadline - Self.clock())
        timer.schedule(deadline: .now() + .milliseconds(Int((delay * 1000).rounded(.up)) + 1))
        let scheduledGeneration = generation
        timer.setEventHandler { [weak self] in
            guard let self, self.generation == scheduledGeneration else { return }
            self.mergeTimer?.cancel()
            self.mergeTimer = nil
            switch self.announcementMerge.timerFired(now: Self.clock()) {
            case .evaluate: self.scheduleEvaluation()
            case .hold(let until): self.armMergeTimer(until)
            case .none: break
            }
        }
        mergeTimer = timer
        timer.resume()
    }

    /// Reads everything the socket holds, then classifies once.
    private func drain() {
        guard let socket else { return }
        let readStarted = DispatchTime.now().uptimeNanoseconds
        var overrun = false
        drainChangedOther = false
        drainAnnounced = []
        reading: while true {
            switch socket.receive({ handle($0) }) {
            case .received: continue
            case .foreign(let port):
                let (allowed, suppressed) = foreignLog.admit(now: Double(DispatchTime.now().uptimeNanoseconds) / 1e9)
                if allowed {
                    log.warning("dropped a netlink message sent by another process (port \(port)), not the kernel"
                                + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
                }
            case .drained: break reading
            case .overrun:
                // Messages were lost; keep reading what is there, then re-read the kernel's state.
                overrun = true
                published.withLock { $0.overruns += 1 }
            case .failed(let error):
                log.error("netlink receive failed: \(error)")
                break reading
            }
        }
        if overrun {
            do {
                try reread()
                pendingReason = Reason(code: .resync, detail: "netlink socket overrun; state re-read from the kernel")
            } catch {
                log.error("re-dump after overrun failed: \(error)")
            }
        }
        // An option that changed nothing shown may still move a deadline (an advertisement that
        // comes without the captive-portal URI its router announced ends it a little later).
        armExpiryTimer()
        guard dirty else { return }
        if !overrun && !drainChangedOther {
            // Router advertisement options alone: at most about one evaluation a second per interface.
            if !drainAnnounced.isEmpty { announcementsChanged(drainAnnounced) }
            return
        }
        if dirtyReadStarted == nil { dirtyReadStarted = readStarted }
        scheduleEvaluation()
    }

    /// Reads the kernel's state again in place of the table (after an overrun, after a wake) and
    /// has the next evaluation rebuild every slice. No dump tells what routers announced: what
    /// has not run out is kept for the links still there (lifetimes run on boot time, which
    /// counts a sleep).
    func reread() throws {
        let before = table
        table = try dumpKernelState()
        table.adoptAnnouncements(from: before)
        linkVerdicts = [:]
        rebuild = true
        dirty = true
    }

    /// Dumps links, addresses, routes and rules on a second, short-lived socket in the same namespace.
    func dumpKernelState() throws -> KernelStateTable {
        try Self.readKernelState(networkNamespace: config.networkNamespace)
    }

    /// The kernel's links, addresses, routes and rules as the monitor keeps them, read afresh
    /// (RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE dumps) in `networkNamespace`.
    static func readKernelState(networkNamespace: String?) throws -> KernelStateTable {
        final class Collector { var changes: [KernelChange] = [] }
        var attempt = 0
        while true {
            attempt += 1
            let collector = Collector()
            do {
                try NetworkNamespace.run(in: networkNamespace) {
                    let socket = try NetlinkSocket { message in
                        collector.changes += NetlinkMessageDecoder.changes(in: message)
                    }
                    try socket.setReceiveBufferSize(1 << 20)
                    for type in [RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE, RTM_GETRULE] { try socket.dump(Int32(type)) }
                }
                return KernelStateTable(collector.changes)
            } catch let error as NetlinkError where error.code == NLE_DUMP_INTR && attempt < 5 {
                // The kernel's tables changed during the dump (NLM_F_DUMP_INTR): read them again.
                continue
            }
        }
    }

    /// The monitor's own picture of the kernel (for tests that compare it with a fresh dump).
    var kernelState: KernelStateTable { onQueue { table } }

    // MARK: Classification

    private func scheduleEvaluation() {
        let delay = config.monitor.debounceMilliseconds
        guard delay > 0 else { evaluate(); return }
        guard !evaluationScheduled else { return }
        evaluationScheduled = true
        let scheduledGeneration = generation
        queue.asyncAfter(deadline: .now() + .milliseconds(delay)) { [weak self] in
            guard let self, self.generation == scheduledGeneration, self.evaluationScheduled else { return }
            self.evaluationScheduled = false
            self.evaluate()
        }
    }

    /// Classifies the table once and emits an event if the status changed.
    func evaluate() {
        let readStarted = dirtyReadStarted
        dirtyReadStarted = nil
        dirty = false
        evaluationScheduled = false
        let reason = pendingReason
        pendingReason = nil
        // Whatever announcements were held go out with this evaluation.
        announcementMerge.evaluated(announcedSinceEvaluation, now: Self.clock())
        announcedSinceEvaluation = []
        if mergeTimer != nil {
            mergeTimer?.cancel()
            mergeTimer = nil
        }
        let action: StatusTracker.Action
        if rebuild {
            action = tracker.update(makeSnapshot(), reason: reason)
        } else {
            // Only what messages touched is read again; the tracker keeps the other slices.
            let slices = touched.map { makeSlice(at: $0) }
            action = tracker.update(slices: slices, modems: modemsChanged ? modems : nil,
                                    verdict: verdictChanged ? (probe, probePath) : nil,
                                    rules: rulesChanged ? table.rules : nil, reason: reason)
        }
        clearChanges()
        publish()
        armExpiryTimer()
        switch action {
        case .none: break
        case .emit(let event):
            // Timed only at debug level and for an event a netlink read caused (the checker's
            // verdict, modems and a reload have no read to start from).
            let classified = readStarted != nil && log.threshold <= .debug ? DispatchTime.now().uptimeNanoseconds : 0
            for id in observers.keys.sorted() { observers[id]?(event) }
            for id in streams.keys.sorted() { streams[id]?.yield(event) }
            if let readStarted, classified != 0 {
                let done = DispatchTime.now().uptimeNanoseconds
                log.debug("#\(event.sequence) timing: netlink read to event \((classified - readStarted) / 1000) µs, "
                          + "to the observers' return \((done - readStarted) / 1000) µs")
            }
        }
    }

    private func clearChanges() {
        touched.removeAll(keepingCapacity: true)
        contentsTouched.removeAll(keepingCapacity: true)
        rebuild = false
        modemsChanged = false
        rulesChanged = false
        verdictChanged = false
    }

    /// The kind and configuration verdicts of a link, decided once per name.
    private func verdict(for facts: LinkFacts) -> LinkVerdict {
        if let cached = linkVerdicts[facts.index], cached.name == facts.name { return cached }
        let sysfs = SysfsInterfaceFacts(root: config.sysfsRoot)
        let verdict = LinkVerdict(name: facts.name,
                                  kind: InterfaceKindRules.kind(for: sysfs.kindFacts(for: facts), overrides: config.interfaces.kinds),
                                  metered: Glob.matchesAny(config.interfaces.metered, facts.name),
                                  ignored: Glob.matchesAny(config.monitor.ignoreInterfaces, facts.name))
        linkVerdicts[facts.index] = verdict
        return verdict
    }

    /// The slice of `index` as `makeSnapshot()` would have it; when only its link changed, the
    /// tracker's slice lends its addresses and routes.
    private func makeSlice(at index: Int) -> LinkSlice {
        guard let facts = table.links[index] else {
            return table.slice(at: index, kind: .other, metered: false, ignored: false)
        }
        let verdict = verdict(for: facts)
        let previous = contentsTouched.contains(index) ? nil : tracker.indexed.slices[index]
        return table.slice(at: index, kind: verdict.kind, metered: verdict.metered, ignored: verdict.ignored,
                           previous: previous)
    }

    private func makeSnapshot() -> NetworkSnapshot {
        var kinds: [Int: InterfaceKind] = [:], metered: Set<Int> = [], ignored: Set<Int> = []
        for (index, facts) in table.links {
            let verdict = verdict(for: facts)
            kinds[index] = verdict.kind
            if verdict.metered { metered.insert(index) }
            if verdict.ignored { ignored.insert(index) }
        }
        var snapshot = table.snapshot(kinds: kinds, metered: metered, ignored: ignored, modems: modems, probe: probe)
        snapshot.probePath = probePath
        snapshot.standbyVerdicts = standbyVerdicts
        snapshot.connectivityCheck = config.connectivityCheck
        return snapshot
    }

    private func publish() {
        let status = tracker.status
        published.withLock { $0.status = status }
    }
}
