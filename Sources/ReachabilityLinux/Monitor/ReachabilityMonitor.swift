import CNetlink
import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import Synchronization

/// Keeps a live picture of links, addresses and routes from netlink and emits a
/// `ReachabilityEvent` the moment the machine's `Status` changes.
///
/// The shell of `MonitorCore`, which owns the state and decides: the monitor reads the netlink
/// socket (on a `ReadinessThread` blocked in `poll`, drained on `queue` until EAGAIN, so a burst
/// yields at most one event), sysfs, leases and the clock, and performs the core's actions in
/// one flat loop. The socket subscribes before the kernel is dumped, so nothing falls between.
///
/// One serial queue owns all state; observers are called on that queue and must not block it.
/// `status`, `overrunCount` and `configuration` are readable from any thread; the verdicts
/// (`setProbe`, `setStandbyProbe`) and the modems are taken without waiting for the queue.
public final class ReachabilityMonitor: @unchecked Sendable, QueueConfined {
    /// Identifies an observer for `removeObserver`.
    public struct ObserverToken: Hashable, Sendable { let id: Int }

    /// The serial queue that owns all state; observers run on it.
    public let queue: DispatchQueue

    /// What other threads read (the only lock; the queue owns everything else).
    private struct Published {
        var status: Status
        /// The slices `status` was classified from (the standby check asks for its uplinks).
        var slices: [Int: LinkSlice]
        var overruns = 0
        var configuration: Configuration
    }
    private let published: Mutex<Published>

    /// The current status; safe from any thread. Code on `queue` reads the core's own.
    public var status: Status {
        if queueConfinement.isCurrent { return core.status }
        return published.withLock { $0.status }
    }
    /// How many times the kernel overran the netlink socket (each one followed by a re-dump).
    public var overrunCount: Int { published.withLock { $0.overruns } }
    /// The configuration in force.
    public var configuration: Configuration { published.withLock { $0.configuration } }

    package let queueConfinement: QueueConfinement
    var config: Configuration
    /// The state and the decisions.
    var core: MonitorCore
    private var listening: (socket: NetlinkSocket, reader: ReadinessThread)?
    let subscribers = MonitorSubscribers()
    private let timers: MonitorTimers
    /// Reads the DHCP leases (off `queue`) for the core's metered hints.
    var leases: DHCPLeaseWatcher?
    /// Actions of inputs that came while others were performed (an observer that calls back):
    /// performed after them, in order. Nil while nothing is performed.
    private var backlog: [MonitorCore.Action]?
    let log: LogSink
    /// Where every `now` comes from: the events' timestamps (wall) and the timers (boot time).
    let clock: ReachdClock

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
        let core = MonitorCore(configuration: configuration.core, now: clock.now())
        self.core = core
        self.published = Mutex(Published(status: core.status, slices: core.tracker.indexed.slices, configuration: configuration))
        self.queueConfinement = QueueConfinement(queue)
        self.timers = MonitorTimers(queue: queue)
    }

    deinit { listening?.reader.stop() }

    /// Subscribes to the rtnetlink groups, then dumps links, addresses and routes; the initial
    /// status is ready when it returns. The initial state is no event (ask `initialEvent()`, or
    /// use `events()`) — except for observers registered before the first start, or after a
    /// `stop()`, who saw an older state: they get one event with reason `resync`.
    /// Calling it while running does nothing. Throws `NetlinkError` or `NetworkNamespaceError`.
    public func start() throws {
        try onQueue {
            guard listening == nil else { return }
            let socket = try NetlinkSocket.monitoring(networkNamespace: config.networkNamespace,
                                                      receiveBufferSize: config.receiveBufferSize)
            // Subscribed first: whatever changes during the dump is queued on `socket` and applied after it.
            let table = try KernelStateDump.read(networkNamespace: config.networkNamespace)
            perform(core.start(table: table, kindFacts: kindFacts(of: table), observed: !subscribers.isEmpty, now: clock.now()))
            // The thread the kernel woke drains on `queue` (`sync`: no hand-over to another
            // thread); it keeps the socket (and its fd) alive until it has ended.
            let identity = ObjectIdentifier(socket)
            let queue = self.queue
            let reader = try ReadinessThread(fileDescriptor: socket.fileDescriptor, keepAlive: socket,
                                             name: "reachd.netlink") { [weak self] in
                queue.sync {
                    // A reader outlived by a restart must not drain its successor's socket.
                    guard let self, let current = self.listening?.socket, ObjectIdentifier(current) == identity else { return }
                    self.drain(current)
                }
            }
            listening = (socket, reader)
            reader.start()
            startLeaseWatcher()
        }
    }

    /// Stops watching; observers stay registered, `events()` streams finish. `start()` may be called again.
    public func stop() {
        onQueue {
            listening?.reader.stop()
            listening = nil
            leases?.stop()
            leases = nil
            perform(core.stop())
            timers.cancelAll()
            subscribers.finishStreams()
        }
    }

    /// The current status as the event `initial`, with the current sequence number.
    public func initialEvent() -> ReachabilityEvent {
        onQueue { core.tracker.initialEvent(now: clock.now().wall) }
    }

    /// Registers `handler`, called on `queue`, in order, for every event emitted from now on.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) -> ObserverToken {
        onQueue { ObserverToken(id: subscribers.add(handler)) }
    }

    /// Registers `handler`, called on `queue` with the status whenever a classification changed
    /// the measured link quality's figures without an event (a new RTT, the same class): what
    /// `GetStatus` should show although nobody is told.
    @discardableResult
    public func addQuietObserver(_ handler: @escaping @Sendable (Status) -> Void) -> ObserverToken {
        onQueue { ObserverToken(id: subscribers.addQuiet(handler)) }
    }

    /// Registers `handler`, called on `queue` whenever routes, rules or addresses changed (a
    /// cache of route look-ups is stale then), whether or not the status changed.
    @discardableResult
    public func addRoutingObserver(_ handler: @escaping @Sendable () -> Void) -> ObserverToken {
        onQueue { ObserverToken(id: subscribers.addRouting(handler)) }
    }

    public func removeObserver(_ token: ObserverToken) {
        onQueue { subscribers.remove(token.id) }
    }

    /// The events as an async sequence: first the current state (`initial`), then every change.
    /// It finishes when the monitor stops; ending the iteration unregisters it.
    public func events() -> AsyncStream<ReachabilityEvent> {
        let (stream, continuation) = AsyncStream<ReachabilityEvent>.makeStream(bufferingPolicy: .unbounded)
        onQueue {
            continuation.yield(core.tracker.initialEvent(now: clock.now().wall))
            let id = subscribers.add(continuation)
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
        queue.async { [self] in perform(core.verdict(probe, path: path, began: began, now: clock.now())) }
    }

    /// `setProbe(_:path:began:)` of a check that began now.
    public func setProbe(_ probe: Probe?, path: ProbePath?) {
        setProbe(probe, path: path, began: nil)
    }

    /// The ModemManager source's modems; re-classifies at once (reason `modemChanged`).
    public func setModems(_ modems: [ModemState]) {
        onQueue { perform(core.modemsChanged(modems, now: clock.now())) }
    }

    /// Applies a new configuration (kinds, metered, ignored, debounce); re-classifies with reason
    /// `configReloaded`. The namespace, buffer size and sequence numbering of a running monitor stay.
    public func reconfigure(_ configuration: Configuration) {
        onQueue {
            var next = configuration
            if listening != nil {
                next.networkNamespace = config.networkNamespace
                next.receiveBufferSize = config.receiveBufferSize
            }
            next.firstSequence = config.firstSequence
            config = next
            published.withLock { $0.configuration = next }
            if listening != nil, leases?.directory != next.interfaces.leaseDirectory { startLeaseWatcher() }
            perform(core.reconfigured(next.core, kindFacts: kindFacts(of: core.table), now: clock.now()))
        }
    }

    /// Performs `actions` in order, on `queue`: one flat loop. Actions of inputs that arrive
    /// meanwhile (an observer calling back, the dump the core asked for) wait for their turn.
    func perform(_ actions: [MonitorCore.Action]) {
        if backlog != nil {
            backlog?.append(contentsOf: actions)
            return
        }
        var next = actions
        while !next.isEmpty {
            backlog = []
            for action in next { carryOut(action) }
            next = backlog ?? []
        }
        backlog = nil
    }

    private func carryOut(_ action: MonitorCore.Action) {
        switch action {
        case .publish:
            let status = core.status, slices = core.tracker.indexed.slices
            published.withLock {
                $0.status = status
                $0.slices = slices
            }
        case .emit(let event, let readStarted):
            // Timed only at debug level and for an event a netlink read caused.
            let started = log.threshold <= .debug ? readStarted : nil
            let classified = started != nil ? clock.now().uptime : 0
            subscribers.emit(event)
            if let started {
                let micros = { (end: TimeInterval) in Int(max(end - started, 0) * 1_000_000) }
                log.debug("#\(event.sequence) timing: netlink read to event \(micros(classified)) µs, "
                          + "to the observers' return \(micros(clock.now().uptime)) µs")
            }
        case .quiet(let status):
            subscribers.quiet(status)
        case .arm(let timer, let seconds):
            timers.arm(timer, after: seconds) { [weak self] in
                guard let self else { return }
                self.perform(self.core.timerFired(timer, now: self.clock.now()))
            }
        case .cancel(let timer):
            timers.cancel(timer)
        case .rereadKernel(let cause):
            var table: KernelStateTable?
            do {
                table = try KernelStateDump.read(networkNamespace: config.networkNamespace)
            } catch {
                switch cause {
                case .overrun: log.error("re-dump after overrun failed: \(error)")
                case .wake: log.error("re-reading the kernel's state after wake failed: \(error)")
                }
            }
            perform(core.kernelDumped(table, kindFacts: table.map(kindFacts(of:)) ?? [:], now: clock.now()))
        case .refreshLeases(let indexes):
            leases?.refresh(indexes)
        case .forgetLease(let index):
            leases?.forget(index)
        case .armCostFlip(let index, let seconds):
            queue.asyncAfter(deadline: .now() + seconds) { [weak self] in
                guard let self else { return }
                self.perform(self.core.costFlipIntervalEnded(index: index, now: self.clock.now()))
            }
        case .routingChanged:
            subscribers.routingChanged()
        case .recheck(let index, let path):
            subscribers.recheck(index: index, path: path)
        case .log(let level, let line):
            log.log(level, line)
        }
    }

    /// Reads everything the socket holds, message by message into the core, then ends the read.
    private func drain(_ socket: NetlinkSocket) {
        var read = MonitorCore.Read(now: clock.now())
        let sysfs = SysfsInterfaceFacts(root: config.sysfsRoot)
        reading: while true {
            let result = socket.receive { message in
                for change in NetlinkMessageDecoder.changes(in: message) {
                    core.received(change, into: &read) { sysfs.kindFacts(for: $0) }
                }
            }
            switch result {
            case .received: continue
            case .foreign(let port): core.foreignDatagram(port: port, into: &read)
            case .drained: break reading
            case .overrun:
                // Messages were lost; keep reading what is there, then re-read the kernel's state.
                read.overran()
                published.withLock { $0.overruns += 1 }
            case .failed(let error):
                log.error("netlink receive failed: \(error)")
                break reading
            }
        }
        perform(core.readEnded(read))
    }

    /// What sysfs says about the kind of every link of `table`.
    private func kindFacts(of table: KernelStateTable) -> [Int: InterfaceKindFacts] {
        let sysfs = SysfsInterfaceFacts(root: config.sysfsRoot)
        return table.links.mapValues { sysfs.kindFacts(for: $0) }
    }

    /// The monitor's own picture of the kernel (for tests that compare it with a fresh dump).
    var kernelState: KernelStateTable { onQueue { core.table } }

    /// The status and the slices it was classified from, as other threads see them.
    var publishedPicture: (slices: [Int: LinkSlice], status: Status) {
        if queueConfinement.isCurrent { return (core.tracker.indexed.slices, core.status) }
        return published.withLock { ($0.slices, $0.status) }
    }
}
