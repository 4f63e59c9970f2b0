import Foundation
import ReachabilityCore
import ReachabilityLinux

/// Host targets without a daemon.
///
/// Without reachd there is no `Check` to ask, so the answer is the default route's: a host is
/// as reachable as the machine (the flags carry no `isDirect`/`isLocalAddress`). Documented in
/// the README; the daemon's answer replaces it as soon as the daemon answers.
enum InProcessHostCheck {
    static func evaluate(host: String, status: Status,
                         configuration: ReachabilityMonitor.Configuration) -> (state: Reachability.State, check: HostCheck?) {
        (Reachability.State(status: status.status, flags: status.flags), nil)
    }
}
