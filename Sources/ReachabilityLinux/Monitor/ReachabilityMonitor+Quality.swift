import FoundationEssentials
import ReachabilityCore

// How good each uplink is: the passive dumps go to the core's estimator; the verdicts' RTTs
// reach it with the verdicts. What it decides comes back as actions like any other input.
extension ReachabilityMonitor {
    /// One passive measurement of the apps' TCP sockets (`PassiveQualitySampler`). Returns at
    /// once: taken on `queue`; dropped while the machine sleeps.
    public func measured(_ dump: QualityDump) {
        queue.async { [self] in perform(core.qualityMeasured(dump, now: clock.now())) }
    }

    /// Registers `handler`, called on `queue` when uplink `index` should be checked now (a data
    /// stall, or traffic answered again): the path's check when `path`, else that standby's.
    @discardableResult
    public func addRecheckObserver(_ handler: @escaping @Sendable (_ index: Int, _ path: Bool) -> Void) -> ObserverToken {
        onQueue { ObserverToken(id: subscribers.addRecheck(handler)) }
    }

    /// True while measuring is useful: on (`[LinkQuality] Enabled=`), awake, and the machine
    /// has a path whose traffic can be measured. The sampler runs while it holds.
    public var wantsQualitySamples: Bool {
        onQueue { core.wantsQualitySamples }
    }
}
