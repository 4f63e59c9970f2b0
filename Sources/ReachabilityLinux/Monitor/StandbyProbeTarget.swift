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
