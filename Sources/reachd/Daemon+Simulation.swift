import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer
import ReachabilitySystem

/// Lays `SimulationOverlay` between the monitor and the server: real events pass through it,
/// `Simulate` calls and their timers and hang-ups go into it, and what comes out is published.
/// Confined to the monitor's queue (which the server shares), where `monitor.status` is the
/// monitor's own state, read without the lock other threads take.
final class SimulationController: @unchecked Sendable {
    private let monitor: ReachabilityMonitor
    private let queue: DispatchQueue
    /// Where `now` comes from: the wall clock for the events' times, boot time for the callers'
    /// warning budget.
    private let clock: ReachdClock
    private var overlay: SimulationOverlay
    /// Publishes an event (to the server, systemd and the log).
    var publish: (ReachabilityEvent) -> Void = { _ in }
    /// `[Simulation] Group=`; its gid is looked up per call.
    var groupName: String?
    var log = LogSink.discarding
    /// Where callers' users and groups are looked up.
    private let identityQueue = DispatchQueue(label: "reachd.identity")
    /// The budget of warnings that callers cause.
    private var callerLog = LogRateLimiter()
    /// The armed timer of the simulation in effect (`SimulationOverlay.timer`).
    private var timer: (token: Int, source: DispatchSourceTimer)?

    /// Call on the monitor's queue, with its observer registered in the same block.
    init(monitor: ReachabilityMonitor, clock: ReachdClock) {
        self.monitor = monitor
        self.queue = monitor.queue
        self.clock = clock
        self.overlay = SimulationOverlay(initial: monitor.initialEvent())
    }

    /// What subscribers see now, as an `initial` event.
    func initialEvent() -> ReachabilityEvent { overlay.initialEvent(now: clock.now().wall) }

    /// What subscribers see now.
    var published: Status { overlay.published }

    /// True while the real status is what subscribers see (no simulation on): its figures
    /// that moved without an event (`addQuietObserver`) may show in `GetStatus`.
    var showsReal: Bool { overlay.active == nil }

    /// A real event from the monitor.
    func real(_ event: ReachabilityEvent) {
        if let out = overlay.real(event) {
            publish(out)
        } else if overlay.active != nil {
            log.debug("real #\(event.sequence) \(event.reason.code.rawValue)\(event.reason.interface.map { " \($0)" } ?? ""): \(event.current.status.rawValue), held while the simulation is on")
        }
    }

    /// `Simulate(…)`: permission, then the parameters, then the overlay. The caller's groups
    /// are looked up (`getpwuid`, `getgrouplist`, `getgrnam`: files, or NSS over the network)
    /// on a queue of their own, never on the monitor's.
    func simulate(_ parameters: [String: JSONValue], caller: VarlinkCaller, completion: @escaping ReachabilityServer.Completion) {
        let groupName = self.groupName
        identityQueue.async { [weak self] in
            let groups = UserDatabase.groups(ofUser: caller.uid, primaryGroup: caller.gid)
            let allowedGroup = groupName.flatMap { UserDatabase.groupID(named: $0) }
            let allowed = SimulationPermission.allows(uid: caller.uid, groups: groups, allowedGroup: allowedGroup)
            let missingGroup = groupName != nil && allowedGroup == nil
            guard let self else { return completion(.error(.permissionDenied)) }
            self.queue.async {
                if missingGroup, let groupName {
                    self.warn("[Simulation] Group=\(groupName): no such group; only root may simulate")
                }
                self.simulate(parameters, caller: caller, allowed: allowed, completion: completion)
            }
        }
    }

    /// The rest of `simulate`, on the monitor's queue, once the permission is known.
    private func simulate(_ parameters: [String: JSONValue], caller: VarlinkCaller, allowed: Bool,
                          completion: @escaping ReachabilityServer.Completion) {
        guard allowed else {
            warn("Simulate refused: uid \(caller.uid) (pid \(caller.pid)) is neither root nor in [Simulation] Group=")
            return completion(.error(.permissionDenied))
        }
        let started: SimulationOverlay.Started
        do {
            let request = try SimulateRequest.parse(parameters)
            started = try overlay.simulate(request, real: monitor.status, owner: caller.connection, now: clock.now().wall)
        } catch {
            warn("Simulate by uid \(caller.uid): \(error)")
            return completion(.error(.invalidParameter(error.parameter)))
        }
        syncTimer()
        if let event = started.event { publish(event) }
        completion(.reply("status", overlay.published))
    }

    /// A warning a caller made happen: a few lines at once, then one a second, with the number
    /// held back, so that a loop of refused calls cannot crowd reachd's own lines out of the
    /// journal (whose rate limit would drop them).
    private func warn(_ message: String) {
        let (allowed, suppressed) = callerLog.admit(now: clock.now().uptime)
        guard allowed else { return }
        log.warning(message + (suppressed > 0 ? " (\(suppressed) similar messages suppressed)" : ""))
    }

    /// A connection closed; if it held a `whileConnected` simulation, that ends. Handed to the
    /// queue anew so that the event never goes out in the middle of another delivery.
    func hungUp(connection: Int) {
        queue.async { [weak self] in
            guard let self else { return }
            let event = self.overlay.hungUp(connection: connection, real: self.monitor.status, now: self.clock.now().wall)
            self.syncTimer()
            if let event { self.publish(event) }
        }
    }

    /// Keeps the one timer the overlay names armed: the one armed before is cancelled when the
    /// simulation it would end was replaced or has ended.
    private func syncTimer() {
        let wanted = overlay.timer
        if let wanted, wanted.token == timer?.token { return }
        timer?.source.cancel()
        timer = nil
        guard let wanted else { return }
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .seconds(wanted.seconds))
        source.setEventHandler { [weak self] in
            guard let self else { return }
            let event = self.overlay.expire(token: wanted.token, real: self.monitor.status, now: self.clock.now().wall)
            self.syncTimer()
            if let event { self.publish(event) }
        }
        timer = (wanted.token, source)
        source.resume()
    }
}

extension Daemon {
    /// Puts the simulation overlay between the monitor and the server. Call before the server
    /// exists; `attach(to:)` it once it does.
    func startSimulation(monitor: ReachabilityMonitor) -> SimulationController {
        monitor.queue.sync {
            let controller = SimulationController(monitor: monitor, clock: clock)
            controller.groupName = configuration.simulation.group
            controller.log = log
            // Registered in the same block as the overlay read the initial state: no event between.
            monitor.addObserver { [weak controller] event in controller?.real(event) }
            return controller
        }
    }
}
