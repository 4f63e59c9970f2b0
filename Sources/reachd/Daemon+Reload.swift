import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// SIGHUP: re-reads the configuration. A bad file is logged and the running configuration
    /// stays; a good one is applied to the monitor (reason `configReloaded` when the status changes).
    func reload() {
        _ = notifier.reloading()
        defer { _ = notifier.ready(status: publishedStatus()?.systemdStatusText) }
        let fresh: ReachdConfiguration
        do {
            fresh = try ReachdConfiguration.load(configPath: options.configPath)
        } catch {
            log.error("reload: \(error); keeping the running configuration")
            return
        }
        if fresh.socket != configuration.socket || fresh.events != configuration.events {
            log.warning("reload: [Socket] and [Events] changes take effect at the next start")
        }
        if fresh.limits.server != configuration.limits.server {
            log.warning("reload: [Limits] changes other than ProbeMinInterval= take effect at the next start")
        }
        if fresh.metrics != configuration.metrics {
            log.warning("reload: [Metrics] changes take effect at the next start")
        }
        configuration = fresh
        // The running monitor keeps its namespace, buffer and sequence numbering (`reconfigure`).
        monitor?.reconfigure(.init(fresh))
        reloadHooks.forEach { $0(fresh) }
        log.info("configuration reloaded")
    }

    /// What subscribers see (the simulated status while a simulation is on).
    func publishedStatus() -> Status? {
        guard let monitor, let simulation else { return monitor?.status }
        return monitor.queue.sync { simulation.published }
    }
}
