import ReachabilityCore

/// The monitor takes the checker's verdicts (`setProbe` re-classifies, reason `probeResult`).
extension ReachabilityMonitor: ProbeTarget {}

extension ConnectivityChecker {
    /// Follows `monitor`: every event's status goes to `statusChanged`, and the uplinks a data
    /// stall asks to check to `recheck` (the observers only enqueue on the checker's queue, so
    /// the monitor's queue is never held up), then starts. Call after `monitor.start()`.
    @discardableResult
    public func attach(to monitor: ReachabilityMonitor) -> ReachabilityMonitor.ObserverToken {
        let token = monitor.addObserver { [weak self] event in self?.statusChanged(event.current) }
        monitor.addRecheckObserver { [weak self] index, path in self?.recheck(index: index, path: path) }
        start()
        return token
    }
}
