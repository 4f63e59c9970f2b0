import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityHost
import Synchronization

/// Where the connectivity checker gets the status from and hands its verdicts to: the
/// `ReachabilityMonitor` in reachd (a protocol, so tests can stand in for it).
public protocol ProbeTarget: AnyObject, Sendable {
    /// The current status (safe from any thread).
    var status: Status { get }
    /// Takes a verdict (nil: not checked; connectivity unknown) about `path` (nil: not
    /// reachable); re-classifies. A verdict about another path than the status's is not applied.
    func setProbe(_ probe: Probe?, path: ProbePath?)
    /// As `setProbe(_:path:)`, from a check that began at `began` (boot time as the checker's
    /// clock reads it; nil: now): a check from before the machine's last wake does not count.
    func setProbe(_ probe: Probe?, path: ProbePath?, began: TimeInterval?)
}

extension ProbeTarget {
    public func setProbe(_ probe: Probe?, path: ProbePath?, began: TimeInterval?) {
        setProbe(probe, path: path)
    }
}

/// The connectivity check (docs/architecture.md): runs `HTTPProbe` over the primary interface when
/// `ProbeScheduler` says so and hands each verdict to the monitor. The standby uplinks' checks
/// (`+Standby`) and the pause around a sleep (`+Sleep`) live beside it.
///
/// Wiring (reachd, `Daemon+Connectivity.swift`): create it with the monitor as target and call
/// `attach(to: monitor)` once the monitor has started (it forwards every event's status to
/// `statusChanged` and starts); `probeNow` answers varlink `Probe()`; `reconfigure` on SIGHUP.
/// The checker keeps its state on its own serial queue, so an observer call only enqueues, and
/// the HTTP checks run on threads of their own: a hanging check never delays an event.
public final class ConnectivityChecker: @unchecked Sendable {
    /// `[Connectivity]`, `[Limits] ProbeMinInterval=` and the backoff: what the scheduler decides with.
    public typealias Configuration = ProbeScheduler.Configuration

    /// The answer to `probeNow`.
    public typealias Reply = ProbeScheduler.Reply

    public let queue: DispatchQueue
    let target: any ProbeTarget
    var configuration: Configuration
    /// `configuration.enabled`, readable from the monitor's queue: with the check off, an
    /// event's status is not even handed over (`reconfigure` reads the path when it turns on).
    private let enabled: Atomic<Bool>
    var scheduler: ProbeScheduler
    /// Shared by all checks: bounds the threads that hanging look-ups can hold.
    private var resolver: HostResolver
    /// The checker's own threads, made at start, for its HTTP checks and their name look-ups:
    /// no flood of `Check` calls can take them.
    private let checkPool = WorkerPool(name: "reachd-probe", threads: 2, maxQueued: 2)
    /// Where a check's IPv4 request runs while its IPv6 one runs on the check's own thread.
    private let familyPool = WorkerPool(name: "reachd-probe-v4", threads: 2, maxQueued: 2, eager: false)
    private let resolverPool = WorkerPool(name: "reachd-probe-dns", threads: 2, maxQueued: 2)
    /// The checks running, by the scheduler's id, and when each began (boot time).
    private var running: [Int: (handle: HTTPProbe.Handle, began: TimeInterval)] = [:]
    private var timer: DispatchSourceTimer?
    /// The scheduler's id of the armed timer: a handler of a replaced timer does nothing.
    private var timerID: Int?
    private var waiting: [Int: @Sendable (Reply) -> Void] = [:]
    private var nextRequest = 1
    private var actionObserver: (@Sendable (ProbeScheduler.Action) -> Void)?
    private var checkObserver: (@Sendable (Method, Probe) -> Void)?
    /// Make the checks' sockets in this network namespace; nil: the caller's own.
    let networkNamespace: String?
    let log: LogSink
    /// Where the scheduler reads the time; tests step its wall clock apart from its uptime.
    let clock: ReachdClock
    /// Between `suspend()` and `resume()` (the machine sleeps): no check runs, and manual
    /// requests wait in `heldRequests` for the check after wake.
    var suspended = false
    var heldRequests: [Int] = []
    /// The checks of the uplinks besides the primary (`CheckStandby=`).
    let standby: StandbyChecks
    /// The TLS context of the configuration in force, built at its first https check and shared
    /// by every check until a reload (loading the CA store per check cost ~18 ms of CPU each).
    private var tls: TLSContext?
    private var tlsBuilt = 0
    /// Notices about failed checks, APIs not used and APIs not believed, each kind bounded like
    /// the router option notices: what the network answers decides how often they come.
    private var noticeLogs: [Notice: LogRateLimiter] = [:]

    /// The kinds of notice the checker logs, each with its own rate limit.
    enum Notice: Hashable {
        case checkFailed, standbyCheckFailed, apiNotUsed, apiNotBelieved
    }

    /// - Parameters:
    ///   - networkNamespace: the namespace (a name under /run/netns or a path) the checks run in;
    ///     nil: the caller's own. The in-process monitor passes its own, tests theirs.
    ///   - log: takes each verdict (debug), each failed check (notice) and a URL that cannot
    ///     be checked (warning); reachd passes its sink.
    ///   - clock: what the scheduler measures intervals with (`ReachdClock.system`: boot time).
    public init(configuration: Configuration, target: any ProbeTarget,
                queue: DispatchQueue = DispatchQueue(label: "reachd.probe"),
                networkNamespace: String? = nil, log: LogSink = .discarding, clock: ReachdClock = .system) {
        self.clock = clock
        self.standby = StandbyChecks(configuration: configuration, networkNamespace: networkNamespace)
        self.configuration = configuration
        self.enabled = Atomic(configuration.enabled)
        self.target = target
        self.queue = queue
        self.networkNamespace = networkNamespace
        self.log = log
        self.scheduler = ProbeScheduler(configuration: configuration)
        self.resolver = Self.resolver(timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace, pool: resolverPool)
    }

    /// Begins with the target's current status.
    public func start() {
        queue.async { [self] in
            warnAboutURL()
            perform(scheduler.start(path: ProbePath(target.status), now: clock.now()))
            standbyStatusChanged(ProbePath(target.status))
        }
    }

    /// Stops checking; running checks are cancelled, waiting `probeNow` calls answered `.disabled`.
    /// Not from the checker's own queue (it waits for it).
    public func stop() {
        queue.sync {
            perform(scheduler.stop())
            performStandby(standby.scheduler.stop())
        }
    }

    /// Feeds a new status (from a monitor observer; any thread): the target's. Only a change of
    /// the primary path (interface, addresses, gateways) or of reachability triggers a check.
    /// With the check off it is dropped at once: nothing looks at the path until a reload
    /// turns the check on, which reads the target's path then.
    public func statusChanged(_ status: Status) {
        guard enabled.load(ordering: .sequentiallyConsistent) else { return }
        let path = ProbePath(status)
        queue.async { [self] in
            perform(scheduler.pathChanged(path, now: clock.now()))
            standbyStatusChanged(path)
        }
    }

    /// Runs a check now (varlink `Probe()`, `reachctl probe`); while one runs, waits for it.
    /// `completion` runs on the checker's queue.
    public func probeNow(completion: @escaping @Sendable (Reply) -> Void) {
        queue.async { [self] in
            let request = nextRequest
            nextRequest += 1
            waiting[request] = completion
            if suspended { heldRequests.append(request); return }
            perform(scheduler.probeRequested(request, now: clock.now()))
        }
    }

    /// Checks uplink `index` now (a data stall, or its traffic answered again): the path's
    /// check when `path`, else that standby uplink's (if it is checked). Any thread.
    public func recheck(index: Int, path: Bool) {
        queue.async { [self] in
            guard !suspended else { return }
            if path {
                perform(scheduler.recheck(now: clock.now()))
            } else {
                performStandby(standby.scheduler.recheck(index: index))
            }
        }
    }

    /// Applies new settings (SIGHUP): a change of Enabled, URL, Response or Interval checks again
    /// at once; a new Timeout applies from the next check.
    public func reconfigure(_ configuration: Configuration) {
        queue.async { [self] in
            // A reload reads the CA store and `CAFile=` again (either may have changed).
            tls = nil
            let turnedOn = configuration.enabled && !self.configuration.enabled
            self.configuration = configuration
            // Set before the path is read: a status published after that read is handed over.
            enabled.store(configuration.enabled, ordering: .sequentiallyConsistent)
            if turnedOn && !suspended {
                // The statuses of the events while it was off were dropped (`statusChanged`).
                let path = ProbePath(target.status)
                perform(scheduler.pathChanged(path, now: clock.now()))
                standby.lastPath = path
            }
            resolver = Self.resolver(timeout: configuration.timeoutSeconds, networkNamespace: networkNamespace, pool: resolverPool)
            warnAboutURL()
            perform(scheduler.reconfigure(configuration, now: clock.now()))
            standby.reconfigure(configuration, networkNamespace: networkNamespace)
            performStandby(standby.scheduler.reconfigure(configuration, candidates: standbyCandidates()))
        }
    }

    /// Test hook: sees every action the scheduler decides, in order, on the checker's queue.
    public func observeActions(_ observer: @escaping @Sendable (ProbeScheduler.Action) -> Void) {
        queue.sync { actionObserver = observer }
    }

    /// How many TLS contexts the checker built (one per configuration with https; tests count them).
    public var tlsContextsBuilt: Int { queue.sync { tlsBuilt } }

    /// Sees the verdict of every request that ran to its end (not of cancelled ones), on the
    /// checker's queue, with how it asked (the captive-portal API or the HTTP check): reachd
    /// counts them for its metrics.
    public func observeChecks(_ observer: @escaping @Sendable (Method, Probe) -> Void) {
        queue.sync { checkObserver = observer }
    }

    static func resolver(timeout: TimeInterval, networkNamespace: String?, pool: WorkerPool) -> HostResolver {
        var configuration = HostResolver.Configuration()
        configuration.timeout = timeout
        configuration.networkNamespace = networkNamespace
        // The pool's ceiling, not the threads made so far: a pool that makes its threads as jobs
        // need them has none yet, and a limit of 0 would refuse every look-up.
        configuration.maxInFlight = pool.maxThreads
        return HostResolver(configuration: configuration, pool: pool)
    }

    private func warnAboutURL() {
        guard configuration.enabled else { return }
        do {
            _ = try ProbeURL(configuration.url)
        } catch {
            log.warning("\(error): connectivity stays unknown")
        }
    }

    // MARK: performing the scheduler's actions (on `queue`)

    /// `began`: when the check whose verdict `actions` may publish began (nil: now).
    func perform(_ actions: [ProbeScheduler.Action], began: TimeInterval? = nil) {
        for action in actions {
            actionObserver?(action)
            switch action {
            case .startProbe(let id, let path):
                startProbe(id: id, path: path)
            case .cancelProbe(let id):
                running.removeValue(forKey: id)?.handle.cancel()
            case .schedule(let after, let timerID):
                arm(after: after, timerID: timerID)
            case .cancelTimer:
                timer?.cancel()
                timer = nil
                timerID = nil
            case .publish(let probe):
                // Published for the path the scheduler holds now: a check of an older path
                // never completes (its result is ignored), so this is the verdict's path.
                target.setProbe(probe, path: scheduler.path, began: began ?? clock.now().uptime)
            case .reply(let requests, let reply):
                for request in requests { waiting.removeValue(forKey: request)?(reply) }
            }
        }
    }

    /// The configuration's TLS context when a check of `path` speaks https (its URL, or the
    /// path's captive-portal API), built now if it is not yet; nil when none is needed or it
    /// cannot be built (the request then builds its own and fails with the reason). Every check,
    /// the standby uplinks' too, shares it.
    func sharedTLS(for path: ProbePath) -> TLSContext? {
        let needsTLS = (try? ProbeURL(configuration.url))?.isHTTPS == true
            || path.captivePortalApi.map(CaptivePortalAPI.isUsable) == true
        return needsTLS ? sharedTLS() : nil
    }

    private func sharedTLS() -> TLSContext? {
        if let tls { return tls }
        do {
            let context = try TLSContext(caFile: configuration.caFile)
            tlsBuilt += 1
            tls = context
            return context
        } catch {
            return nil
        }
    }

    /// Logs a notice unless too many of its kind came lately (10 a minute).
    func notice(_ kind: Notice, _ line: String) {
        var limiter = noticeLogs[kind] ?? LogRateLimiter(burst: 10, interval: 60)
        let (allowed, suppressed) = limiter.admit(now: clock.now().uptime)
        noticeLogs[kind] = limiter
        guard allowed else { return }
        log.notice(line + (suppressed > 0 ? " (\(suppressed) more suppressed)" : ""))
    }

    private func startProbe(id: Int, path: ProbePath) {
        let configuration = self.configuration, clock = self.clock
        let request: HTTPProbe.Request, api: HTTPProbe.Request?
        let tls = sharedTLS(for: path)
        let began = clock.now().uptime
        switch Self.check(configuration, path: path, networkNamespace: networkNamespace, resolver: resolver, tls: tls, clock: clock) {
        case .verdict(let probe):
            // A URL that cannot be checked: answer at once, connectivity unknown.
            queue.async { [self] in perform(scheduler.probeCompleted(id: id, probe: probe, now: clock.now()), began: began) }
            return
        case .request(let made, let apiRequest):
            request = made
            api = apiRequest
        }
        let handle = HTTPProbe.Handle()
        running[id] = (handle, began)
        // Runs on the thread that ends the check; one hand-over to the checker's queue, none back.
        let finish: @Sendable (Probe?) -> Void = { [weak self] probe in
            guard let self else { return }
            self.queue.async {
                let check = self.running.removeValue(forKey: id)
                guard let probe else {
                    // No thread was free to go on with it: no verdict, tried again soon.
                    return self.perform(self.scheduler.probeBusy(id: id))
                }
                // A cancelled check (its path is gone) is no check made.
                if check != nil { self.logVerdict(probe, interface: path.interface) }
                self.perform(self.scheduler.probeCompleted(id: id, probe: probe, now: self.clock.now()), began: check?.began)
            }
        }
        let checked: @Sendable (Method, Probe) -> Void = { [weak self] method, probe in
            guard let self else { return }
            self.queue.async {
                if method == .api, probe.result == .limited {
                    self.notice(.apiNotUsed, "captive-portal API \(probe.url) on \(path.interface) not used: "
                                + TerminalText.escaped(probe.error ?? "no answer") + "; the HTTP check decides")
                }
                self.checkObserver?(method, probe)
            }
        }
        let disagreed: @Sendable (String) -> Void = { [weak self] note in
            guard let self else { return }
            self.queue.async { self.notice(.apiNotBelieved, "\(note) (on \(path.interface))") }
        }
        let checkPool = self.checkPool, familyPool = self.familyPool
        let submitted = checkPool.submit {
            Self.runFamilies(configuration, request: request, api: api, families: Self.families(request, path: path), path: path,
                             handle: handle, pool: checkPool, familyPool: familyPool, clock: clock, checked: checked,
                             disagreed: disagreed, completion: finish)
        }
        if !submitted {
            // A full pool says nothing about the network: try again soon, publish nothing.
            running.removeValue(forKey: id)
            queue.async { [self] in perform(scheduler.probeBusy(id: id)) }
        }
    }

    /// Every verdict at debug; a check that failed (no answer, an answer that is no portal) at
    /// notice, as NetworkManager reports its connectivity check.
    private func logVerdict(_ probe: Probe, interface: String) {
        switch probe.result {
        case .limited, .unknown:
            notice(.checkFailed, "connectivity check on \(interface) failed: \(probe.summary)")
        case .full, .portal, .none:
            log.debug("connectivity check on \(interface): \(probe.summary)")
        }
    }

    private func arm(after seconds: TimeInterval, timerID: Int) {
        timer?.cancel()
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(Int((seconds * 1000).rounded())))
        source.setEventHandler { [weak self] in
            guard let self, self.timerID == timerID else { return }
            self.timer?.cancel()
            self.timer = nil
            self.timerID = nil
            self.perform(self.scheduler.timerFired(id: timerID, now: self.clock.now()))
        }
        timer = source
        self.timerID = timerID
        source.resume()
    }
}
