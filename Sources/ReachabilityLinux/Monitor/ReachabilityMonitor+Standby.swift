import ReachabilityCore

/// Where the standby check learns the uplinks besides the primary and hands its verdicts to.
public protocol StandbyProbeTarget: AnyObject, Sendable {
    /// The uplinks other than the primary with a usable default route of their own, now.
    var standbyUplinks: [StandbyUplink] { get }
    /// The standby check's verdict on the uplink at `index` (nil: no longer checked); shown as
    /// that interface's `connectivity`, never as the status's.
    func setStandbyProbe(_ probe: Probe?, index: Int)
}

extension ReachabilityMonitor: StandbyProbeTarget {
    public var standbyUplinks: [StandbyUplink] {
        onQueue { StandbyUplink.all(in: tracker.indexed, status: tracker.status) }
    }

    /// Re-classifies at once; a change is an event with reason `probeResult` naming the interface.
    public func setStandbyProbe(_ probe: Probe?, index: Int) {
        onQueue {
            guard standbyVerdicts[index] != probe else { return }
            standbyVerdicts[index] = probe
            let name = tracker.status.interfaces.first { $0.index == index }?.name
            pendingReason = Reason(code: .probeResult, interface: name, detail: "standby uplink")
            rebuild = true
            evaluate()
        }
    }
}
