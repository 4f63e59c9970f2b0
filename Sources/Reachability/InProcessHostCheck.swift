import Foundation
import ReachabilityCore
import ReachabilityLinux

/// Host targets without a daemon: the same `HostChecker` reachd runs (route look-up per address,
/// judged against the in-process monitor's status), in the monitor's network namespace.
enum InProcessHostCheck {
    static func evaluate(host: String, status: Status,
                         configuration: ReachabilityMonitor.Configuration) -> (state: Reachability.State, check: HostCheck?) {
        var checkerConfiguration = HostChecker.Configuration()
        checkerConfiguration.networkNamespace = configuration.networkNamespace
        switch HostChecker(configuration: checkerConfiguration).checkNow(host: host, port: nil, status: { status }) {
        case .success(let check):
            return (Reachability.state(of: check), check)
        case .failure:
            // Not resolvable (or not a valid name): not reachable, as SCNetworkReachability says.
            return (.unreachable, nil)
        }
    }
}
