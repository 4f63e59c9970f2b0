import Foundation
import ReachabilityCore
import Synchronization

/// A network your unit tests drive: no daemon, no root, no netlink. Hand it to `Reachability`,
/// `PathMonitor` or `NetworkDetector` as `source: .simulated(network)`, then set what the
/// network is; their callbacks, notifications and streams fire as they would from reachd.
///
/// ```swift
/// let network = SimulatedNetwork(.wifi)
/// let reachability = try Reachability(source: .simulated(network))
/// reachability.whenUnreachable = { _ in … }
/// try reachability.startNotifier()          // first callback: wifi
/// network.set(.notReachable)                // whenUnreachable runs
/// network.set(.wwan2G, connectivity: .portal)
/// ```
///
/// Statuses are built as reachd builds a simulated one (`reachctl simulate`): a cellular status
/// gets a cellular object, `expensive` follows the kind, connectivity and the probe agree with
/// reachability, and `simulated` is true. `update(_:)` sets any field by hand.
public final class SimulatedNetwork: Sendable, Equatable, CustomStringConvertible {
    private struct State {
        var status: Status
        var probe: NetworkDetector.Result?
        var observers: [Int: @Sendable (Status) -> Void] = [:]
        var nextID = 0
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - status: what the network is at first (default Wi-Fi).
    ///   - connectivity: whether the internet answers (default `full`; `none` when not reachable).
    public init(_ status: NetworkStatus = .wifi, connectivity: Connectivity? = nil) {
        do {
            let initial = try Self.build(status, connectivity: connectivity, expensive: nil, accessTechnology: nil, now: Date())
            state = Mutex(State(status: initial))
        } catch {
            preconditionFailure("SimulatedNetwork(\(status.rawValue)): \(error)")
        }
    }

    /// The status the sources report now.
    public var status: Status { state.withLock { $0.status } }

    /// Sets what the network is. `connectivity` nil: `full` when reachable; `expensive` nil:
    /// cellular or not; `accessTechnology` (`edge`, `lte`, …) for a cellular status. A
    /// combination reachd would refuse (reachable with connectivity `none`, a technology of
    /// another generation) is a programming error in the test and traps with the reason.
    public func set(_ status: NetworkStatus, connectivity: Connectivity? = nil, expensive: Bool? = nil,
                    accessTechnology: String? = nil) {
        do {
            let next = try Self.build(status, connectivity: connectivity, expensive: expensive,
                                       accessTechnology: accessTechnology, now: Date())
            publish { $0 = next }
        } catch {
            preconditionFailure("SimulatedNetwork.set(\(status.rawValue)): \(error)")
        }
    }

    /// Changes only the connectivity of the current status (`.portal`, `.limited`, …); on a
    /// reachable status only (`none` means not reachable: `set(.notReachable)`).
    public func set(connectivity: Connectivity) {
        let current = status
        set(current.status, connectivity: connectivity, expensive: current.expensive,
            accessTechnology: current.cellular?.accessTechnology)
    }

    /// Sets any field by hand; the sources see the result as it is.
    public func update(_ body: (inout Status) -> Void) {
        publish(body)
    }

    /// What `NetworkDetector.check()` answers: nil (the default) derives it from the status's
    /// probe, as reachd's `Probe()` would.
    public func setProbeResult(_ result: NetworkDetector.Result?) {
        state.withLock { $0.probe = result }
    }

    /// `NetworkDetector`'s answer now.
    var probeResult: NetworkDetector.Result {
        let (status, probe) = state.withLock { ($0.status, $0.probe) }
        if let probe { return probe }
        if let statusProbe = status.probe { return NetworkDetector.Result(statusProbe) }
        return NetworkDetector.Result(ProbeVerdict.unknown(url: Simulation.simulatedProbeURL, error: "not checked", at: Date()))
    }

    /// Registers `handler` for every later status; returns the token for `removeObserver`.
    func addObserver(_ handler: @escaping @Sendable (Status) -> Void) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.observers[state.nextID] = handler
            return state.nextID
        }
    }

    func removeObserver(_ id: Int) {
        _ = state.withLock { $0.observers.removeValue(forKey: id) }
    }

    private func publish(_ body: (inout Status) -> Void) {
        let (status, observers) = state.withLock { state -> (Status, [@Sendable (Status) -> Void]) in
            body(&state.status)
            return (state.status, state.observers.keys.sorted().compactMap { state.observers[$0] })
        }
        for observer in observers { observer(status) }
    }

    public static func == (a: SimulatedNetwork, b: SimulatedNetwork) -> Bool { a === b }

    public var description: String { "simulated(\(status.status.rawValue), \(status.connectivity.rawValue))" }

    // MARK: - Building statuses

    /// The real-looking status a simulation of `status` is laid over: an interface of that kind,
    /// a gateway, the internet answering.
    static func base(for status: NetworkStatus) -> Status {
        let (name, kind): (String, InterfaceKind) = switch status {
        case .notReachable, .ethernet: ("eth0", .ethernet)
        case .wifi: ("wlan0", .wifi)
        case .wwan, .wwan2G, .wwan3G, .wwan4G, .wwan5G: ("wwan0", .wwan)
        case .unknown: ("net0", .other)
        }
        let link = Interface(name: name, index: 2, kind: kind, up: true, carrier: status != .notReachable,
                             operstate: status == .notReachable ? "down" : "up",
                             addresses: status == .notReachable ? [] : ["192.0.2.20/24"], metered: false)
        guard status.isReachable else {
            var offline = Status.initial(since: Date())
            offline.interfaces = [link]
            offline.probe = ProbeVerdict.notReachable(url: Simulation.simulatedProbeURL, at: Date())
            return offline
        }
        let probe = Probe(url: Simulation.simulatedProbeURL, result: .full, httpStatus: 204, checkedAt: Date())
        return Status(status: status, reachable: true, connectivity: .full, primary: link, vpn: nil, cellular: nil,
                      expensive: false, ipv4: true, ipv6: false, gateways: ["192.0.2.1"], flags: [.reachable],
                      interfaces: [link], probe: probe, since: Date())
    }

    static func build(_ status: NetworkStatus, connectivity: Connectivity?, expensive: Bool?, accessTechnology: String?,
                      now: Date) throws(Simulation.InvalidParameter) -> Status {
        let simulation = Simulation(status: status, connectivity: connectivity, expensive: expensive,
                                    accessTechnology: accessTechnology)
        return try simulation.resolve(over: base(for: status), now: now)
    }
}
