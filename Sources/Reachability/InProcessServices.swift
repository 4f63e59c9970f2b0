import Dispatch
import Foundation
import ReachabilityCore
import ReachabilityLinux

/// What the in-process fallback runs besides netlink, so that an app without reachd learns what
/// the daemon would tell it: the cellular generation from ModemManager (reachd's
/// `[Cellular] ModemManager=`) and the connectivity check (reachd's `[Connectivity]`).
///
/// Both are on by default, with reachd's defaults. They are reachd's own components
/// (`ModemManagerSource`, `ConnectivityChecker`) attached to the in-process `ReachabilityMonitor`.
public struct InProcessServices: Sendable, Equatable {
    /// Follow ModemManager for the cellular generation (`wwan2G` … `wwan5G`). Without a bus to
    /// connect to, or without ModemManager on it, there are simply no modems.
    public var modemManager: Bool = true
    /// The D-Bus address (`unix:path=…`) to find ModemManager on; nil: the system bus
    /// (`DBUS_SYSTEM_BUS_ADDRESS` when set, else the default socket).
    public var busAddress: String? = nil
    /// The first status waits at most this long for ModemManager's first answer, so that it
    /// already carries the cellular generation (as reachd waits before it declares itself ready).
    public var modemManagerWait: TimeInterval = 2
    /// The connectivity check: reachd's `[Connectivity]` (`connectivity.url`,
    /// `connectivity.enabled = false` leaves connectivity `unknown`) and backoff. It runs in the
    /// monitor's network namespace (`inProcessConfiguration.networkNamespace`).
    public var connectivity = ConnectivityChecker.Configuration()

    public init(modemManager: Bool = true, busAddress: String? = nil, modemManagerWait: TimeInterval = 2,
                connectivity: ConnectivityChecker.Configuration = ConnectivityChecker.Configuration()) {
        self.modemManager = modemManager
        self.busAddress = busAddress
        self.modemManagerWait = modemManagerWait
        self.connectivity = connectivity
    }

    /// No ModemManager and no connectivity check: the monitor's netlink facts only.
    public static let none = InProcessServices(modemManager: false, connectivity: {
        var configuration = ConnectivityChecker.Configuration()
        configuration.enabled = false
        return configuration
    }())
}

/// The services of one in-process monitor, started and stopped with it.
final class InProcessServiceSet: @unchecked Sendable {
    private let modems: ModemManagerSource?
    private let checker: ConnectivityChecker?
    private let checkerToken: ReachabilityMonitor.ObserverToken?
    private weak var monitor: ReachabilityMonitor?

    /// Attaches to a started monitor. With `connectivity: false` only ModemManager is followed
    /// (a one-shot status does not wait for an HTTP check). `log` is the app's sink, or one
    /// that discards.
    init(monitor: ReachabilityMonitor, services: InProcessServices, log: LogSink, connectivity: Bool = true) {
        self.monitor = monitor
        if services.modemManager {
            let source = ModemManagerSource(monitor: monitor, busAddress: services.busAddress, log: log)
            if services.modemManagerWait > 0 {
                _ = source.start(waitingUpTo: services.modemManagerWait)
            } else {
                source.start()
            }
            modems = source
        } else {
            modems = nil
        }
        if connectivity, services.connectivity.enabled {
            let checker = ConnectivityChecker(configuration: services.connectivity, target: monitor,
                                              networkNamespace: monitor.configuration.networkNamespace, log: log)
            checkerToken = checker.attach(to: monitor)
            self.checker = checker
        } else {
            checker = nil
            checkerToken = nil
        }
    }

    /// Synchronous; not from the monitor's queue.
    func stop() {
        if let checkerToken { monitor?.removeObserver(checkerToken) }
        checker?.stop()
        modems?.stop()
    }
}
