import ReachabilityCore

/// The monitor takes the checker's verdicts (`setProbe` re-classifies, reason `probeResult`).
extension ReachabilityMonitor: ProbeTarget {}

extension ConnectivityChecker {
    /// Follows `monitor`: every event's status goes to `statusChanged` (the observer only
    /// enqueues on the checker's queue, so the monitor's queue is never held up), then starts.
    /// Call after `monitor.start()`.
    @discardableResult
    public func attach(to monitor: ReachabilityMonitor) -> ReachabilityMonitor.ObserverToken {
        let token = monitor.addObserver { [weak self] event in self?.statusChanged(event.current) }
        start()
        return token
    }
}
