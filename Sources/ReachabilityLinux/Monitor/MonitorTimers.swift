import Dispatch
import FoundationEssentials
import ReachabilityCore

/// The monitor core's timers as Dispatch timers on the monitor's queue: one of each at most;
/// one replaced or cancelled never fires. Used on that queue only.
final class MonitorTimers: @unchecked Sendable {
    private let queue: DispatchQueue
    private var armed: [MonitorCore.Timer: DispatchSourceTimer] = [:]

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Arms `timer` to call `fired` after `seconds` (Dispatch counts the delay; the core decided it
    /// from the injected clock), replacing an armed one.
    func arm(_ timer: MonitorCore.Timer, after seconds: TimeInterval, fired: @escaping @Sendable () -> Void) {
        cancel(timer)
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .microseconds(Int((seconds * 1_000_000).rounded(.up))))
        let identity = ObjectIdentifier(source as AnyObject)
        source.setEventHandler { [weak self] in
            guard let self, let current = self.armed[timer], ObjectIdentifier(current as AnyObject) == identity else { return }
            self.armed[timer] = nil
            current.cancel()
            fired()
        }
        armed[timer] = source
        source.resume()
    }

    func cancel(_ timer: MonitorCore.Timer) {
        armed.removeValue(forKey: timer)?.cancel()
    }

    func cancelAll() {
        for source in armed.values { source.cancel() }
        armed = [:]
    }
}
