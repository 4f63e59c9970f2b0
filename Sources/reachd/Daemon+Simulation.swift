import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer
import ReachabilitySystem

/// Lays `SimulationOverlay` between the monitor and the server: real events pass through it,
/// `Simulate` calls and their timers and hang-ups go into it, and what comes out is published.
/// Confined to the monitor's queue (which the server shares).
final class SimulationController: @unchecked Sendable {
    private let monitor: ReachabilityMonitor
    private let queue: DispatchQueue
    private var overlay: SimulationOverlay
    /// Publishes an event (to the server, systemd and the log).
    var publish: (ReachabilityEvent) -> Void = { _ in }
    /// `[Simulation] Group=`; its gid is looked up per call.
    var groupName: String?
    var log = LogSink.discarding

    /// Call on the monitor's queue, with its observer registered in the same block.
    init(monitor: ReachabilityMonitor) {
        self.monitor = monitor
        self.queue = monitor.queue
        self.overlay = SimulationOverlay(initial: monitor.initialEvent())
    }

    /// What subscribers see now, as an `initial` event.
    func initialEvent() -> ReachabilityEvent { overlay.initialEvent() }

    /// What subscribers see now.
    var published: Status { overlay.published }

    /// A real event from the monitor.
    func real(_ event: ReachabilityEvent) {
        if let out = overlay.real(event) {
            publish(out)
        } else if overlay.active != nil {
            log.debug("real #\(event.sequence) \(event.reason.code.rawValue)\(event.reason.interface.map { " \($0)" } ?? ""): \(event.current.status.rawValue), held while the simulation is on")
        }
    }

    /// `Simulate(…)`: permission, then the parameters, then the overlay.
    func simulate(_ parameters: [String: JSONValue], caller: VarlinkCaller, completion: @escaping ReachabilityServer.Completion) {
        guard SimulationPermission.allows(uid: caller.uid, groups: Self.groups(uid: caller.uid, gid: caller.gid),
                                          allowedGroup: allowedGroupID()) else {
            log.warning("Simulate refused: uid \(caller.uid) (pid \(caller.pid)) is neither root nor in [Simulation] Group=")
            return completion(.error(.permissionDenied))
        }
        let started: SimulationOverlay.Started
        do {
            let request = try SimulateRequest.parse(parameters)
            started = try overlay.simulate(request, real: monitor.status, owner: caller.connection, now: Date())
        } catch {
            log.warning("Simulate by uid \(caller.uid): \(error)")
            return completion(.error(.invalidParameter(error.parameter)))
        }
        if let event = started.event { publish(event) }
        if let (token, seconds) = started.timer {
            queue.asyncAfter(deadline: .now() + .seconds(seconds)) { [weak self] in
                guard let self else { return }
                if let event = self.overlay.expire(token: token, real: self.monitor.status, now: Date()) { self.publish(event) }
            }
        }
        completion(.reply("status", overlay.published))
    }

    /// A connection closed; if it held a `whileConnected` simulation, that ends. Handed to the
    /// queue anew so that the event never goes out in the middle of another delivery.
    func hungUp(connection: Int) {
        queue.async { [weak self] in
            guard let self else { return }
            if let event = self.overlay.hungUp(connection: connection, real: self.monitor.status, now: Date()) { self.publish(event) }
        }
    }

    /// The gid of `groupName`; nil: root only (no group set, or no such group).
    private func allowedGroupID() -> UInt32? {
        guard let groupName else { return nil }
        guard let gid = UserDatabase.groupID(named: groupName) else {
            log.warning("[Simulation] Group=\(groupName): no such group; only root may simulate")
            return nil
        }
        return gid
    }

    /// `gid` and the supplementary groups of `uid`'s user.
    static func groups(uid: UInt32, gid: UInt32) -> [UInt32] {
        UserDatabase.groups(ofUser: uid, primaryGroup: gid)
    }
}

extension Daemon {
    /// Puts the simulation overlay between the monitor and the server. Call before the server
    /// exists; `attach(to:)` it once it does.
    func startSimulation(monitor: ReachabilityMonitor) -> SimulationController {
        monitor.queue.sync {
            let controller = SimulationController(monitor: monitor)
            controller.groupName = configuration.simulation.group
            controller.log = log
            // Registered in the same block as the overlay read the initial state: no event between.
            monitor.addObserver { [weak controller] event in controller?.real(event) }
            return controller
        }
    }
}
