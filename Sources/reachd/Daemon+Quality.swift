import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux

extension Daemon {
    /// The passive measurement (`[LinkQuality]`, `[DataStall]`): a sock_diag dump of the apps'
    /// TCP sockets every `Interval=` while the machine has a path and is awake, handed to the
    /// monitor. Changes of routes, rules or addresses (not events) empty the sampler's route cache.
    func startLinkQuality(monitor: ReachabilityMonitor) {
        let sampler = PassiveQualitySampler(log: log, clock: clock) { [weak monitor] dump in monitor?.measured(dump) }
        qualitySampler = sampler
        let follower = QualitySamplerFollower(sampler: sampler, monitor: monitor,
                                              interval: configuration.linkQuality.intervalSeconds)
        monitor.addRoutingObserver { sampler.routesChanged() }
        monitor.addObserver { _ in follower.follow() }
        reloadHooks.append { file in
            monitor.queue.async { follower.follow(interval: file.linkQuality.intervalSeconds) }
        }
        monitor.queue.async { follower.follow() }
    }
}

/// Starts and stops the sampler as the monitor wants samples. Used on the monitor's queue only.
/// A path that goes away stops the sampler only when it stays away for one interval: a link
/// that flaps would otherwise open a sock_diag socket and dump at every carrier change. A sleep
/// or `Enabled=no` stops it at once.
private final class QualitySamplerFollower: @unchecked Sendable {
    private let sampler: PassiveQualitySampler
    private weak var monitor: ReachabilityMonitor?
    private var interval: TimeInterval
    /// The interval the sampler runs at; nil while stopped.
    private var running: TimeInterval?
    /// Counts the stops put off, so that only the last one may happen.
    private var pendingStop = 0

    init(sampler: PassiveQualitySampler, monitor: ReachabilityMonitor, interval: TimeInterval) {
        self.sampler = sampler; self.monitor = monitor; self.interval = interval
    }

    func follow(interval: TimeInterval? = nil) {
        if let interval { self.interval = interval }
        guard let monitor else { return }
        let wanted = monitor.wantsQualitySamples ? self.interval : nil
        if wanted != nil { pendingStop += 1 }
        guard wanted != running else { return }
        if wanted == nil, running != nil, !monitor.status.reachable, (monitor.configuration.linkQuality.enabled || monitor.configuration.dataStall.enabled) {
            // Unreachable while awake: stop only if it lasts (the monitor's queue runs this).
            pendingStop += 1
            let ticket = pendingStop
            monitor.queue.asyncAfter(deadline: .now() + .milliseconds(Int(self.interval * 1000))) { [weak self] in
                guard let self, self.pendingStop == ticket, let monitor = self.monitor, !monitor.wantsQualitySamples else { return }
                self.running = nil
                self.sampler.stop()
            }
            return
        }
        running = wanted
        if let wanted { sampler.start(interval: wanted) } else { sampler.stop() }
    }
}
