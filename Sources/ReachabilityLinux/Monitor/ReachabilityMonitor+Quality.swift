import FoundationEssentials
import ReachabilityCore

// How good each uplink is: the monitor tells the scheduler's estimator which uplinks there are
// (after each classification) and hands it the passive dumps; the verdicts' RTTs reach it with
// the verdicts. What it decides comes back as classifications like any other input.
extension ReachabilityMonitor {
    /// One passive measurement of the apps' TCP sockets (`PassiveQualitySampler`). Returns at
    /// once: taken on `queue`; dropped while the machine sleeps.
    public func measured(_ dump: QualityDump) {
        queue.async { [self] in
            let now = clock.now()
            perform(scheduler.qualityMeasured(dump, now: now), now: now)
        }
    }

    /// True while measuring is useful: on (`[LinkQuality] Enabled=`), awake, and the machine
    /// has a path whose traffic can be measured. The sampler runs while it holds.
    public var wantsQualitySamples: Bool {
        onQueue { config.linkQuality.enabled && !scheduler.asleep && tracker.status.reachable }
    }

    /// The uplinks as the status just classified shows them: the path's interfaces (the
    /// transport and a tunnel on it) and the standby uplinks. On `queue`.
    func takeQualityUplinks(now: ClockReading) {
        guard config.linkQuality.enabled else { return }
        let status = tracker.status
        var uplinks: [QualityUplink] = []
        if status.reachable {
            for interface in [status.primary, status.vpn].compactMap({ $0 }) { uplinks.append(qualityUplink(interface)) }
            for standby in StandbyUplink.all(in: tracker.indexed.slices, status: status) {
                guard let interface = status.interfaces.first(where: { $0.index == standby.path.index }) else { continue }
                uplinks.append(qualityUplink(interface))
            }
        }
        perform(scheduler.qualityUplinks(uplinks, now: now), now: now)
    }

    /// The interface as the estimator knows an uplink: its kind, and its modem's generation and radio.
    private func qualityUplink(_ interface: Interface) -> QualityUplink {
        let modem = scheduler.modems.first { $0.interfaces.contains(interface.name) }
        let generation = modem.flatMap { ModemAccessTechnology(rawValue: $0.accessTechnologies).newest?.generation }
        return QualityUplink(index: interface.index, name: interface.name,
                             technology: LinkTechnology(kind: interface.kind, generation: generation), signal: modem?.signal)
    }
}

extension LinkQualityEstimator.Configuration {
    /// The estimator's part of `[LinkQuality]`: the idle times (the rest is the contract's).
    public init(_ section: ReachdConfiguration.LinkQualitySection) {
        self.init(staleAfter: section.staleAfterSeconds, unknownAfter: max(section.unknownAfterSeconds, section.staleAfterSeconds))
    }
}
