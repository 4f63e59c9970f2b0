import FoundationEssentials

// How good each uplink is: the passive dumps and the verdicts' RTTs go to the scheduler's
// estimator; after each classification the uplinks it follows are brought up to date.
extension MonitorCore {
    /// One passive dump of the apps' sockets; dropped while asleep. Figures that did not move
    /// classify nothing; figures alone are a quiet status, a class that moved an event.
    public mutating func qualityMeasured(_ dump: QualityDump, now: ClockReading) -> [Action] {
        var actions: [Action] = []
        run(scheduler.qualityMeasured(dump, now: now), now: now, into: &actions)
        stallsMeasured(dump, now: now, into: &actions)
        return actions
    }

    /// Measuring is useful: the quality or the data-stall detector on, awake, and a path whose
    /// traffic can be measured.
    public var wantsQualitySamples: Bool {
        (configuration.linkQuality.enabled || configuration.dataStall.enabled) && !scheduler.asleep && tracker.status.reachable
    }

    /// The uplinks as the status just classified shows them (the path's interfaces and the
    /// standby uplinks), handed to the estimator when they or their technology changed.
    mutating func takeQualityUplinks(now: ClockReading, into actions: inout [Action]) {
        guard configuration.linkQuality.enabled else { return }
        let status = tracker.status
        var uplinks: [QualityUplink] = []
        if status.reachable {
            for interface in [status.primary, status.vpn].compactMap({ $0 }) { uplinks.append(qualityUplink(interface)) }
            for standby in StandbyUplink.all(in: tracker.indexed.slices, status: status) {
                guard let interface = status.interfaces.first(where: { $0.index == standby.path.index }) else { continue }
                uplinks.append(qualityUplink(interface))
            }
        }
        guard uplinks != qualityUplinks else { return }
        qualityUplinks = uplinks
        run(scheduler.qualityUplinks(uplinks, now: now), now: now, into: &actions)
    }

    /// The interface as the estimator knows an uplink: its kind, and its modem's generation and
    /// radio, or its Wi-Fi signal's bars.
    private func qualityUplink(_ interface: Interface) -> QualityUplink {
        let modem = scheduler.modems.first { $0.interfaces.contains(interface.name) }
        let generation = modem.flatMap { ModemAccessTechnology(rawValue: $0.accessTechnologies).newest?.generation }
        return QualityUplink(index: interface.index, name: interface.name,
                             technology: LinkTechnology(kind: interface.kind, generation: generation),
                             signal: modem?.signal ?? interface.wifi?.radioSignal)
    }
}

extension LinkQualityEstimator.Configuration {
    /// The estimator's part of `[LinkQuality]`: the idle times (the rest is the contract's).
    public init(_ section: ReachdConfiguration.LinkQualitySection) {
        self.init(staleAfter: section.staleAfterSeconds, unknownAfter: max(section.unknownAfterSeconds, section.staleAfterSeconds))
    }
}
