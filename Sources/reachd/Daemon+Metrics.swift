import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer

extension Daemon {
    /// `[Metrics]`: the collector, when `Listen=` or `TextfileDirectory=` is set (nil otherwise).
    /// Call before the monitor's observer is added; `initial` is the state the server starts from.
    func makeMetrics(initial: ReachabilityEvent, monitor: ReachabilityMonitor, server: ReachabilityServer) -> MetricsCollector? {
        let section = configuration.metrics
        guard section.listen != nil || section.textfileDirectory != nil else { return nil }
        return MetricsCollector(initial: initial, monitor: monitor, server: server, log: log, clock: clock)
    }

    /// Starts serving and writing. A listen address that cannot be bound is fatal (exit 1), as
    /// the varlink socket is; a textfile directory that cannot be written is logged and retried.
    func startMetrics(_ metrics: MetricsCollector) throws {
        let section = configuration.metrics
        if let address = section.listen {
            do {
                try metrics.listen(address)
            } catch {
                throw SocketLocation.Failure(description: "[Metrics] Listen=\(address): \(error)")
            }
            log.info("metrics at http://\(address)/metrics")
        }
        if let directory = section.textfileDirectory {
            metrics.writeTextfile(in: directory, every: section.textfileIntervalSeconds)
            log.info("metrics in \(directory)/\(MetricsTextfile.fileName)")
        }
    }
}
