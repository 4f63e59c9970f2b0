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
/// What to do with each input (a read, a verdict, modems, a reload, sleep, wake, a timer) and
/// with which reason is `MonitorScheduler`'s decision; the monitor keeps the sockets, the
/// timers, the table and the tracker, and performs the scheduler's actions.
///
/// One serial queue owns all state; observers are called on that queue and must not block it.
/// `status`, `overrunCount` and `configuration` are readable from any thread; the verdicts
/// (`setProbe`, `setStandbyProbe`) and the modems are taken without waiting for the queue.
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
        /// `[LinkQuality]`: whether uplinks' quality is measured, and its idle times.
        public var linkQuality = ReachdConfiguration.LinkQualitySection()

        public init() {}
    }

    /// Identifies an observer for `removeObserver`.
    public struct ObserverToken: Hashable, Sendable { let id: Int }

    /// The serial queue that owns all state; observers run on it.
    public let queue: DispatchQueue

    // MARK: State published for other threads (the only lock; the queue owns everything else).

    private struct Published {
        var status: Status
        /// The slices `status` was classified from (the standby check asks for its uplinks).
        var slices: [Int: LinkSlice]
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
    var config: Configuration
    var tracker: StatusTracker
    var table = KernelStateTable()
    /// Per link index: the decided kind and the configuration's verdicts, cached until the link is renamed.
    var linkVerdicts: [Int: LinkVerdict] = [:]
    /// What the network says about links' costs, used when the configuration names a link
    /// neither `Metered=` nor `NotMetered=`: per index its DHCP lease, and the interfaces
    /// NetworkManager calls metered.
    var meteredGuesses: [Int: Bool] = [:]
    var networkManagerMetered: Set<String> = []
    /// At most one `costChanged` per link a second, flips logged once a minute.
    var costFlips = CostFlipMerger()
    /// Reads the DHCP leases for `meteredGuesses`, off `queue`.
    var leases: DHCPLeaseWatcher?
    /// What to do with each input, and the verdicts and modems the monitor was told.
    var scheduler: MonitorScheduler
    var socket: NetlinkSocket?
    private var reader: ReadinessThread?
    private var subscribers = Subscribers()
    /// The scheduler's timers that are armed.
    private var timers: [MonitorScheduler.Timer: DispatchSourceTimer] = [:]
    private var logLimits = LogLimits()
    let log: LogSink
    /// Where every `now` comes from: the events' timestamps (wall) and the timers (boot time).
    let clock: ReachdClock

    /// The observers and the `events()` streams, in the order they came.
    private struct Subscribers {
        var observers: [Int: @Sendable (ReachabilityEvent) -> Void] = [:]
        /// Told of statuses whose measured figures moved without an event.
        var quietObservers: [Int: @Sendable (Status) -> Void] = [:]
        var streams: [Int: AsyncStream<ReachabilityEvent>.Continuation] = [:]
        var lastID = 0
        var isEmpty: Bool { observers.isEmpty && streams.isEmpty }

        mutating func nextID() -> Int {
            lastID += 1
            return lastID
        }
    }

    /// What the network and other processes can make the monitor log: a few lines, then one a minute.
    private struct LogLimits {
        /// Datagrams from other processes.
        var foreign = LogRateLimiter(burst: 3, interval: 60)
        /// Malformed router advertisement options (anyone on the link can send them).
        var option = LogRateLimiter(burst: 10, interval: 60)
    }

    /// - Parameters:
    ///   - log: takes the failures of the netlink socket; by default nothing is logged (reachd
    ///     passes its sink).
    ///   - clock: where every `now` comes from (`ReachdClock.system`: the wall clock and boot time).
    public init(configuration: Configuration = Configuration(), queue: DispatchQueue = DispatchQueue(label: "reachd.monitor"),
                log: LogSink = .discarding, clock: ReachdClock = .system) {
        self.queue = queue
        self.log = log
        self.clock = clock
        self.config = configuration
        var scheduler = MonitorScheduler(configuration: MonitorScheduler.Configuration(configuration.monitor))
        _ = scheduler.qualityConfigured(enabled: configuration.linkQuality.enabled,
                                        configuration: LinkQualityEstimator.Configuration(configuration.linkQuality),
                                        now: clock.now())
        self.scheduler = scheduler
        var nothingYet = NetworkSnapshot()
        nothingYet.connectivityCheck = configuration.connectivityCheck
        let tracker = StatusTracker(snapshot: nothingYet, firstSequence: configuration.firstSequence, now: clock.now().wall)
        self.tracker = tracker
        self.published = Mutex(Published(status: tracker.status, slices: tracker.indexed.slices, configuration: configuration))
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
            // Someone who already saw a state (empty before the first start, stale after a stop)
            // is told what the kernel says now, as a numbered event.
            let now = clock.now()
            perform(scheduler.start(observed: !subscribers.isEmpty, now: now), now: now)
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
            startLeaseWatcher()
        }
    }

    /// Stops watching; observers stay registered, `events()` streams finish. `start()` may be called again.
    public func stop() {
        onQueue {
            reader?.stop()
            reader = nil
            socket = nil
            stopLeaseWatcher()
            perform(scheduler.stop(), now: clock.now())
            for timer in timers.values { timer.cancel() }
            timers = [:]
            for continuation in subscribers.streams.values { continuation.finish() }
            subscribers.streams = [:]
        }
    }

    /// The current status as the event `initial`, with the current sequence number.
    public func initialEvent() -> ReachabilityEvent {
        onQueue { tracker.initialEvent(now: clock.now().wall) }
    }

    /// Registers `handler`, called on `queue`, in order, for every event emitted from now on.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) -> ObserverToken {
        onQueue {
            let id = subscribers.nextID()
            subscribers.observers[id] = handler
            return ObserverToken(id: id)
        }
    }

    /// Registers `handler`, called on `queue` with the status whenever a classification changed
    /// the measured link quality's figures without an event (a new RTT, the same class): what
    /// `GetStatus` should show although nobody is told.
    @discardableResult
    public func addQuietObserver(_ handler: @escaping @Sendable (Status) -> Void) -> ObserverToken {
        onQueue {
            let id = subscribers.nextID()
            subscribers.quietObservers[id] = handler
            return ObserverToken(id: id)
        }
    }

    public func removeObserver(_ token: ObserverToken) {
        onQueue {
            subscribers.quietObservers[token.id] = nil
            subscribers.observers[token.id] = nil
            subscribers.streams[token.id] = nil
        }
    }

    /// The events as an async sequence: first the current state (`initial`), then every change.
    /// It finishes when the monitor stops; ending the iteration unregisters it.
    public func events() -> AsyncStream<ReachabilityEvent> {
        let (stream, continuation) = AsyncStream<ReachabilityEvent>.makeStream(bufferingPolicy: .unbounded)
        onQueue {
            continuation.yield(tracker.initialEvent(now: clock.now().wall))
            let id = subscribers.nextID()
            subscribers.streams[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.removeObserver(ObserverToken(id: id)) }
        }
        return stream
    }

    /// The connectivity checker's latest verdict about `path` (nil: the checker saw the machine
    /// not reachable); re-classifies (reason `probeResult`). A verdict counts only while the
    /// status's path is `path` (see `ConnectivityRule`), and only from a check that began after
    /// the last wake (`began`, boot time as `clock` reads it; nil: now). Returns at once: the
    /// verdict is taken on `queue`, in the order of the calls.
    public func setProbe(_ probe: Probe?, path: ProbePath?, began: TimeInterval?) {
        queue.async { [self] in
            let now = clock.now()
            perform(scheduler.verdict(probe, path: path, began: began, now: now), now: now)
        }
    }

    /// `setProbe(_:path:began:)` of a check that began now.
    public func setProbe(_ probe: Probe?, path: ProbePath?) {
        setProbe(probe, path: path, began: nil)
    }

    /// The ModemManager source's modems; re-classifies at once (reason `modemChanged`).
    public func setModems(_ modems: [ModemState]) {
        onQueue {
            let now = clock.now()
            perform(scheduler.modemsChanged(modems, now: now), now: now)
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
            if socket != nil, leases?.directory != next.interfaces.leaseDirectory { startLeaseWatcher() }
            let now = clock.now()
            perform(scheduler.qualityConfigured(enabled: next.linkQuality.enabled,
                                                configuration: LinkQualityEstimator.Configuration(next.linkQuality), now: now), now: now)
            perform(scheduler.reconfigured(MonitorScheduler.Configuration(next.monitor), now: now), now: now)
        }
    }

    // MARK: Performing the scheduler's actions

    /// Performs `actions` in order, on `queue`; `now` is the reading the scheduler decided with.
    func perform(_ actions: [MonitorScheduler.Action], now: ClockReading) {
        for action in actions {
            switch action {
            case .evaluate(let evaluation):
                classify(evaluation, now: now)
            case .initialize:
                tracker = StatusTracker(snapshot: scheduler.reported.snapshot(of: table, connectivityCheck: config.connectivityCheck,
                                                                              verdict: verdict(for:)),
                                        firstSequence: config.firstSequence, now: now.wall)
                publish()
                takeQualityUplinks(now: now)
                tracker.publishQuietly()
            case .arm(let timer, let seconds):
                arm(timer, after: seconds)
            case .cancel(let timer):
                timers.removeValue(forKey: timer)?.cancel()
            case .rereadKernel(let cause):
                var succeeded = true
                do {
                    try reread()
                } catch {
                    succeeded = false
                    switch cause {
                    case .overrun: log.error("re-dump after overrun failed: \(error)")
                    case .wake: log.error("re-reading the kernel's state after wake failed: \(error)")
                    }
                }
                perform(scheduler.kernelReread(succeeded: succeeded, nextExpiry: table.nextAnnouncementDeadline, now: now), now: now)
            case .dropVerdicts:
                perform(scheduler.dropVerdicts(path: ProbePath(tracker.status), now: now), now: now)
            case .expireAnnouncements:
                var ranOut: Set<Int> = [], contents: Set<Int> = []
                table.expireAnnouncements(now: now.uptime, touching: &ranOut, contents: &contents)
                perform(scheduler.announcementsExpired(touched: ranOut, contents: contents,
                                                       nextExpiry: table.nextAnnouncementDeadline, now: now), now: now)
            }
        }
    }

    /// Arms the Dispatch timer for `timer`, replacing an armed one.
    private func arm(_ timer: MonitorScheduler.Timer, after seconds: TimeInterval) {
        timers.removeValue(forKey: timer)?.cancel()
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .microseconds(Int((seconds * 1_000_000).rounded(.up))))
        let identity = ObjectIdentifier(source as AnyObject)
        source.setEventHandler { [weak self] in
            // A timer replaced or cancelled since does nothing.
            guard let self, let current = self.timers[timer], ObjectIdentifier(current as AnyObject) == identity else { return }
            self.timers[timer] = nil
            current.cancel()
            let now = self.clock.now()
            self.perform(self.scheduler.timerFired(timer, now: now), now: now)
        }
        timers[timer] = source
        source.resume()
    }

    // MARK: Netlink

    /// One message read by `drain()`, on `queue`: applied to the table, what it changed added to `changes`.
    private func handle(_ message: UnsafeRawBufferPointer, receivedAt now: TimeInterval,
                        into changes: inout MonitorScheduler.KernelChanges) {
        for change in NetlinkMessageDecoder.changes(in: message) {
            switch change {
            case .linkRemoved(let index):
                // A new link may reuse the index and name of a deleted one: decide its kind afresh.
                linkVerdicts[index] = nil
                forgetLease(of: index)
            case .routerOptionRejected(let index, let error):
                let (allowed, suppressed) = logLimits.option.admit(now: now)
                if allowed {
                    log.notice("ignored a \(error) on \(table.links[index]?.name ?? "interface \(index)")"
                               + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
                }
                continue
            case .link, .addressAdded, .addressRemoved, .routeAdded, .routeRemoved, .ruleAdded, .ruleRemoved, .routerOption:
                break
            }
            changes.apply(change, to: &table, receivedAt: now)
        }
    }

    /// Reads everything the socket holds, then hands what changed to the scheduler.
    private func drain() {
        guard let socket else { return }
        // One reading for the whole drain: the messages' receipt, the debounce, the timing.
        let now = clock.now()
        var changes = MonitorScheduler.KernelChanges()
        changes.readStarted = now.uptime
        reading: while true {
            switch socket.receive({ handle($0, receivedAt: now.uptime, into: &changes) }) {
            case .received: continue
            case .foreign(let port):
                let (allowed, suppressed) = logLimits.foreign.admit(now: now.uptime)
                if allowed {
                    log.warning("dropped a netlink message sent by another process (port \(port)), not the kernel"
                                + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
                }
            case .drained: break reading
            case .overrun:
                // Messages were lost; keep reading what is there, then re-read the kernel's state.
                changes.overrun = true
                published.withLock { $0.overruns += 1 }
            case .failed(let error):
                log.error("netlink receive failed: \(error)")
                break reading
            }
        }
        // A new lease comes with its address: read it (off this queue).
        if !changes.contents.isEmpty { leases?.refresh(changes.contents) }
        perform(scheduler.kernelChanged(changes, nextExpiry: table.nextAnnouncementDeadline, now: now), now: now)
    }

    /// Reads the kernel's state again in place of the table (after an overrun, after a wake). No
    /// dump tells what routers announced: what has not run out is kept for the links still there
    /// (lifetimes run on boot time, which counts a sleep).
    func reread() throws {
        let before = table
        table = try dumpKernelState()
        table.adoptAnnouncements(from: before)
        linkVerdicts = [:]
        leases?.refresh(Array(table.links.keys))
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

    /// Classifies as `evaluation` says, tells the scheduler whether the status changed, then
    /// hands the event, if any, to the observers.
    private func classify(_ evaluation: MonitorScheduler.Evaluation, now: ClockReading) {
        // Only what messages touched is read again (unless whole); the tracker keeps the other slices.
        let before = tracker.status
        let action = tracker.update(evaluation, table: table, reported: scheduler.reported,
                                    connectivityCheck: config.connectivityCheck, verdict: verdict(for:), now: now.wall)
        publish()
        defer { takeQualityUplinks(now: now) }
        switch action {
        case .none:
            scheduler.evaluated(emitted: false)
            let after = tracker.status
            if !subscribers.quietObservers.isEmpty, !after.isCopy(of: before),
               after.linkQuality != before.linkQuality || after.interfaces.map(\.linkQuality) != before.interfaces.map(\.linkQuality) {
                for id in subscribers.quietObservers.keys.sorted() { subscribers.quietObservers[id]?(after) }
            }
        case .emit(let event):
            // Told before any observer runs: one that calls back into the monitor finds the
            // scheduler past this classification.
            scheduler.evaluated(emitted: true)
            // Timed only at debug level and for an event a netlink read caused (the checker's
            // verdict, modems and a reload have no read to start from).
            let readStarted = log.threshold <= .debug ? evaluation.readStarted : nil
            let classified = readStarted != nil ? clock.now().uptime : 0
            for id in subscribers.observers.keys.sorted() { subscribers.observers[id]?(event) }
            for id in subscribers.streams.keys.sorted() { subscribers.streams[id]?.yield(event) }
            if let readStarted {
                let done = clock.now().uptime
                log.debug("#\(event.sequence) timing: netlink read to event \(Self.microseconds(classified - readStarted)) µs, "
                          + "to the observers' return \(Self.microseconds(done - readStarted)) µs")
            }
        }
    }

    private static func microseconds(_ seconds: TimeInterval) -> Int {
        Int(max(seconds, 0) * 1_000_000)
    }

    /// The kind and configuration verdicts of a link, decided once per name.
    private func verdict(for facts: LinkFacts) -> LinkVerdict {
        if let cached = linkVerdicts[facts.index], cached.name == facts.name { return cached }
        let sysfs = SysfsInterfaceFacts(root: config.sysfsRoot)
        let verdict = LinkVerdict(name: facts.name,
                                  kind: InterfaceKindRules.kind(for: sysfs.kindFacts(for: facts), overrides: config.interfaces.kinds),
                                  metered: config.interfaces.isMetered(facts.name, guessed: isMeteredGuess(facts)),
                                  ignored: Glob.matchesAny(config.monitor.ignoreInterfaces, facts.name),
                                  constrained: config.interfaces.isConstrained(facts.name))
        linkVerdicts[facts.index] = verdict
        return verdict
    }

    private func publish() {
        let status = tracker.status, slices = tracker.indexed.slices
        published.withLock {
            $0.status = status
            $0.slices = slices
        }
    }

    /// The status and the slices it was classified from, as other threads see them.
    var publishedPicture: (slices: [Int: LinkSlice], status: Status) {
        if queueConfinement.isCurrent { return (tracker.indexed.slices, tracker.status) }
        return published.withLock { ($0.slices, $0.status) }
    }
}
