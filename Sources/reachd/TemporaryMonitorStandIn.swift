import Foundation
import ReachabilityCore
import ReachabilityLinux

// TEMPORARY (server branch) — DELETE THIS FILE WHEN THE MONITOR BRANCH IS MERGED.
// The ReachabilityMonitor on main is a stub with only init/configuration. These stand-ins for
// the API in COMMON.md let reachd compile and run (with an empty status that never changes)
// until the real monitor lands; the real methods replace them one for one.
extension ReachabilityMonitor {
    func start() throws {}
    func stop() {}
    func initialEvent() -> ReachabilityEvent {
        ReachabilityEvent(sequence: configuration.firstSequence, timestamp: Date(), event: .initial,
                          reason: Reason(code: .initial), previous: nil, current: Status.initial())
    }
    func addObserver(_ handler: @escaping @Sendable (ReachabilityEvent) -> Void) {}
    var status: Status { Status.initial() }
    func reconfigure(_ configuration: Configuration) {}
}
