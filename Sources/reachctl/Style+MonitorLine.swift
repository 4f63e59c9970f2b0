import FoundationEssentials
import ReachabilityClient
import ReachabilityCore

extension Style {
    /// `reachctl monitor`'s line for an event: time, sequence number, reason, interface, the
    /// fields that changed, and the status as of the event (a stall's length counted to its
    /// time, so a replayed event reads as it did):
    /// `2026-12-06T02:30:13.000Z #47 dataStall wlan0 [interfaces,primary]: online · wifi (wlan0) ·
    /// internet: full · stalled 0 s (tcp, 96 % retransmitted) · IPv4`. The path's stall is in the
    /// status; a `dataStall` about a standby uplink says that uplink's first:
    /// `… dataStall wwan0 [interfaces]: wwan0 (standby) stalled 0 s (tcp, 96 % retransmitted); online · …`.
    func monitorLine(_ event: ReachabilityEvent) -> String {
        let interface = event.reason.interface.map { " \(safe($0))" } ?? ""
        let changed = event.changes.isEmpty ? "" : " [\(event.changes.joined(separator: ","))]"
        var standby = ""
        switch event.reason.code {
        case .dataStall:
            let current = event.current
            let path = [current.primary?.index, current.vpn?.index].compactMap { $0 }
            if let name = event.reason.interface,
               let uplink = current.interfaces.first(where: { $0.name == name }), !path.contains(uplink.index) {
                var state: [String] = []
                if let verdict = uplink.connectivity { state.append("internet: \(verdict.rawValue)") }
                state.append(uplink.stall?.summary(now: event.timestamp) ?? "not stalled")
                standby = safe("\(name) (standby) " + state.joined(separator: ", ")) + "; "
            }
        case .initial, .linkAdded, .linkRemoved, .linkUp, .linkDown, .carrierGained, .carrierLost, .addressAdded,
             .addressRemoved, .routeAdded, .routeRemoved, .modemChanged, .probeResult, .resync, .configReloaded, .simulation,
             .ruleAdded, .ruleRemoved, .killSwitch, .routerAdvertisement, .sleeping, .resumed, .qualityChanged, .costChanged,
             .roamed, .wifiSignalChanged, .wifiChanged:
            break
        }
        return "\(Timestamp.string(from: event.timestamp)) #\(event.sequence) \(event.reason.code.rawValue)\(interface)\(changed): "
            + standby + summary(event.current, now: event.timestamp)
    }
}
