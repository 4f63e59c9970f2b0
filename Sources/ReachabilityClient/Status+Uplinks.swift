import ReachabilityCore

extension Status {
    /// `reachctl status --verbose`'s lines about the uplinks: the primary with the machine's
    /// verdict, then each standby uplink the standby check checks, with its own:
    /// `uplink eth0 (ethernet) · primary · internet: full`, `uplink wlan0 (wifi) · standby · internet: portal`.
    /// None when not reachable.
    public var uplinkLines: [String] {
        guard let primary else { return [] }
        var lines = ["uplink \(primary.name) (\(primary.kind.rawValue)) · primary · internet: \(connectivity.rawValue)"]
        for interface in interfaces where interface.index != primary.index {
            guard let verdict = interface.connectivity else { continue }
            lines.append("uplink \(interface.name) (\(interface.kind.rawValue)) · standby · internet: \(verdict.rawValue)")
        }
        return lines
    }
}
