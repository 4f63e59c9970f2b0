import FoundationEssentials
import ReachabilityCore

extension Status {
    /// `reachctl status --verbose`'s lines about the uplinks: the primary with the machine's
    /// verdict, then each other uplink that the standby check checks or whose quality is
    /// measured or whose traffic stalls, with its own (a VPN on the path as `vpn`); each measured
    /// uplink followed by its figures, and each stalled one by the stall's:
    /// `uplink eth0 (ethernet) · primary · internet: full · quality: good (4g, 48 ms)`,
    /// `  rtt 48 ms (min 41 ms) · loss 0.3 % · 1200 kbit/s · 14 samples, passive · 3 s ago`,
    /// `uplink wlan0 (wifi) · standby · internet: portal · stalled 12 s (tcp, 96 % retransmitted)`,
    /// `  stall: 48 segments sent since one was received · 95.8 % retransmitted · dumps 10 s apart · since …`,
    /// then the dumps that showed it, oldest first: `    02:30:01 · 10 s · sent 24 · received 0 · retransmitted 23`.
    /// None when not reachable.
    public var uplinkLines: [String] { uplinkLines(now: Date()) }

    /// The uplink lines with each measurement's age counted to `now`.
    public func uplinkLines(now: Date) -> [String] {
        guard let primary else { return [] }
        let current = interfaces.first { $0.index == primary.index } ?? primary
        var lines: [String] = []
        func add(_ interface: Interface, role: String, verdict: Connectivity?) {
            var line = "uplink \(interface.name) (\(interface.kind.rawValue)) · \(role)"
            if let verdict { line += " · internet: \(verdict.rawValue)" }
            if let stall = interface.stall { line += " · " + stall.summary(now: now) }
            if let quality = interface.linkQuality { line += " · quality: \(quality.summary)" }
            lines.append(line)
            if let quality = interface.linkQuality { lines.append("  " + quality.figures(now: now)) }
            if let stall = interface.stall {
                lines.append("  stall: " + stall.figures(now: now))
                for dump in stall.recent { lines.append("    " + dump.line) }
            }
            if let wifi = interface.wifi { lines.append("  " + wifi.figures) }
        }
        add(current, role: "primary", verdict: connectivity)
        for interface in interfaces where interface.index != primary.index {
            guard interface.connectivity != nil || interface.linkQuality != nil || interface.stall != nil else { continue }
            add(interface, role: interface.index == vpn?.index ? "vpn" : "standby", verdict: interface.connectivity)
        }
        return lines
    }
}
