import FoundationEssentials
import ReachabilityCore

extension ReachabilityMonitor: StandbyProbeTarget {
    /// Read from the status last published, without waiting for the monitor's queue.
    public var standbyUplinks: [StandbyUplink] {
        let (slices, status) = publishedPicture
        return StandbyUplink.all(in: slices, status: status)
    }

    /// Re-classifies; a change is an event with reason `probeResult` naming the interface.
    /// Returns at once: the verdict is taken on `queue`, in the order of the calls.
    public func setStandbyProbe(_ probe: Probe?, index: Int, began: TimeInterval?) {
        queue.async { [self] in perform(core.standbyVerdict(probe, index: index, began: began, now: clock.now())) }
    }

    public func setStandbyProbe(_ probe: Probe?, index: Int) {
        setStandbyProbe(probe, index: index, began: nil)
    }
}
