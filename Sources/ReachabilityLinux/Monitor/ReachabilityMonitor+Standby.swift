import FoundationEssentials
import ReachabilityCore

/// Where the standby check learns the uplinks besides the primary and hands its verdicts to.
public protocol StandbyProbeTarget: AnyObject, Sendable {
    /// The uplinks other than the primary with a usable default route of their own, now.
    var standbyUplinks: [StandbyUplink] { get }
    /// The standby check's verdict on the uplink at `index` (nil: no longer checked); shown as
    /// that interface's `connectivity`, never as the status's.
    func setStandbyProbe(_ probe: Probe?, index: Int)
    /// As `setStandbyProbe(_:index:)`, from a check that began at `began` (boot time as the
    /// target's clock reads it; nil: now): a check from before the last wake does not count.
    func setStandbyProbe(_ probe: Probe?, index: Int, began: TimeInterval?)
}

extension StandbyProbeTarget {
    public func setStandbyProbe(_ probe: Probe?, index: Int, began: TimeInterval?) {
        setStandbyProbe(probe, index: index)
    }
}

extension ReachabilityMonitor: StandbyProbeTarget {
    /// Read from the status last published, without waiting for the monitor's queue.
    public var standbyUplinks: [StandbyUplink] {
        let (slices, status) = publishedPicture
        return StandbyUplink.all(in: slices, status: status)
    }

    /// Re-classifies; a change is an event with reason `probeResult` naming the interface.
    /// Returns at once: the verdict is taken on `queue`, in the order of the calls.
    public func setStandbyProbe(_ probe: Probe?, index: Int, began: TimeInterval?) {
        queue.async { [self] in
            let name = tracker.status.interfaces.first { $0.index == index }?.name
            let now = clock.now()
            perform(scheduler.standbyVerdict(probe, index: index, interface: name, began: began, now: now), now: now)
        }
    }

    public func setStandbyProbe(_ probe: Probe?, index: Int) {
        setStandbyProbe(probe, index: index, began: nil)
    }
}
