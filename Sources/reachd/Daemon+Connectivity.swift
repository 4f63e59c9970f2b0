import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer

extension Daemon {
    /// The connectivity check (`[Connectivity]`): follows the monitor, hands it each verdict,
    /// answers varlink `Probe()`, and takes new settings on SIGHUP.
    @discardableResult
    func startConnectivityCheck(monitor: ReachabilityMonitor, server: ReachabilityServer) -> ConnectivityChecker {
        let checker = ConnectivityChecker(configuration: .init(configuration), target: monitor, log: log, clock: clock)
        if let metrics { checker.observeChecks { method, probe in metrics.recordProbe(probe, api: method == .api) } }
        checker.attach(to: monitor)
        server.probeHandler = { completion in
            checker.probeNow { reply in
                switch reply {
                case .probe(let probe):
                    completion(.reply("probe", probe))
                case .disabled:
                    completion(.error(.probeDisabled))
                }
            }
        }
        reloadHooks.append { file in checker.reconfigure(.init(file)) }
        return checker
    }
}
