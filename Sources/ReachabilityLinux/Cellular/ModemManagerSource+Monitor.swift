import Dispatch
import ReachabilityCore

extension ModemManagerSource {
    /// A source that feeds `monitor`: it runs on the monitor's queue and hands every change to
    /// `monitor.setModems(_:)` (the monitor re-classifies, reason `modemChanged`).
    /// Call `start()` after (or before) `monitor.start()`, and `stop()` when done. Logs nothing
    /// unless given a sink.
    public convenience init(monitor: ReachabilityMonitor, busAddress: String? = nil,
                            log: LogSink = .discarding) {
        self.init(queue: monitor.queue, busAddress: busAddress, log: log) { [weak monitor] modems in
            monitor?.setModems(modems)
        }
    }

    /// Like `init(monitor:busAddress:log:)`, over `bus` (shared, on the monitor's queue), which
    /// its owner starts and stops.
    public convenience init(monitor: ReachabilityMonitor, bus: SystemBus, log: LogSink = .discarding) {
        self.init(bus: bus, log: log) { [weak monitor] modems in
            monitor?.setModems(modems)
        }
    }
}
