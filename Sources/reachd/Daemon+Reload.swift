import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// SIGHUP: re-reads the configuration. A bad file is logged and the running configuration
    /// stays; a good one is applied to the monitor (reason `configReloaded` when the status changes).
    func reload() {
        _ = notifier.reloading()
        defer { _ = notifier.ready(status: publishedStatus()?.systemdStatusText) }
        let fresh: DaemonSettings
        do {
            fresh = try DaemonSettings.load(configPath: options.configPath)
        } catch {
            log.error("reload: \(error); keeping the running configuration")
            return
        }
        if fresh.file.socket != settings.file.socket || fresh.file.events != settings.file.events {
            log.warning("reload: [Socket] and [Events] changes take effect at the next start")
        }
        if fresh.file.limits.server != settings.file.limits.server {
            log.warning("reload: [Limits] changes other than ProbeMinInterval= take effect at the next start")
        }
        if fresh.file.metrics != settings.file.metrics {
            log.warning("reload: [Metrics] changes take effect at the next start")
        }
        settings = fresh
        // The running monitor keeps its namespace, buffer and sequence numbering (`reconfigure`).
        monitor?.reconfigure(fresh.monitor)
        reloadHooks.forEach { $0(fresh.file) }
        log.info("configuration reloaded")
    }

    /// What subscribers see (the simulated status while a simulation is on).
    func publishedStatus() -> Status? {
        guard let monitor, let simulation else { return monitor?.status }
        return monitor.queue.sync { simulation.published }
    }
}
