extension ReachabilityEvent {
    /// reachd's log line for the event (at info): the sequence number, the reason, and what a
    /// person reading the log wants to know of it. A check's result names its verdict and the
    /// uplink it is about — `#42 probeResult: portal on eth0`, `#43 probeResult: limited on wlan0
    /// (standby)`, `#44 probeResult: full on eth0 (IPv6: limited)` — any other reason the
    /// status, and the internet's verdict when the event changed it — `#45 carrierLost eth0:
    /// wifi, internet full`; a Wi-Fi change the device's network and bars — `#46 roamed wlan0:
    /// "cafe", 3 bars`. ` (simulated)` at the end while a simulation is on. The log sink
    /// escapes what came from outside (interface names; an SSID is escaped already).
    public var logLine: String {
        // Appended into room made once (one allocation; an interpolation makes one per part).
        var line = "#"
        line.reserveCapacity(96)
        line += String(sequence)
        line += " "
        line += reason.code.rawValue
        switch reason.code {
        case .probeResult:
            if let name = reason.interface, name != current.primary?.name,
               let standby = current.interfaces.first(where: { $0.name == name }) {
                line += ": \(standby.connectivity?.rawValue ?? "not checked") on \(name) (standby)"
            } else {
                line += ": \(current.connectivity.rawValue) on \(current.primary?.name ?? reason.interface ?? "no interface")"
                line += familyNote
            }
        case .qualityChanged:
            // `#46 qualityChanged wlan0: moderate (3g, 420 ms)`: the uplink's new class.
            let name = reason.interface ?? current.primary?.name
            let quality = name.flatMap { name in current.interfaces.first { $0.name == name }?.linkQuality }
                ?? current.linkQuality
            line += (name.map { " \($0)" } ?? "") + ": " + (quality.map(\.summary) ?? "not known")
        case .dataStall:
            // `#47 dataStall wlan0: stalled (tcp, 96 % retransmitted), internet none`.
            let name = reason.interface ?? current.primary?.name
            let stall = name.flatMap { name in current.interfaces.first { $0.name == name }?.stall }
            line += (name.map { " \($0)" } ?? "") + ": " + (stall.map(\.summary) ?? "traffic answered")
            if changes.contains(Status.Field.connectivity.rawValue) { line += ", internet \(current.connectivity.rawValue)" }
        case .roamed, .wifiSignalChanged, .wifiChanged:
            // `#46 roamed wlan0: "cafe", 3 bars`: the device's network now, or that it has none.
            let name = reason.interface ?? current.primary?.name
            let wifi = name.flatMap { name in current.interfaces.first { $0.name == name }?.wifi }
            line += (name.map { " \($0)" } ?? "") + ": "
            guard let wifi else {
                line += "no Wi-Fi connection"
                break
            }
            line += [wifi.ssid.map { "\"\($0)\"" } ?? "no network name", wifi.bars.map { $0 == 1 ? "1 bar" : "\($0) bars" }]
                .compactMap { $0 }.joined(separator: ", ")
        case .initial, .costChanged, .linkAdded, .linkRemoved, .linkUp, .linkDown, .carrierGained, .carrierLost, .addressAdded,
             .addressRemoved, .routeAdded, .routeRemoved, .modemChanged, .resync, .configReloaded, .simulation, .ruleAdded,
             .ruleRemoved, .killSwitch, .routerAdvertisement, .sleeping, .resumed:
            if let interface = reason.interface {
                line += " "
                line += interface
            }
            line += ": "
            line += current.status.rawValue
            if changes.contains(Status.Field.connectivity.rawValue) {
                line += ", internet "
                line += current.connectivity.rawValue
            }
        }
        if current.simulated { line += " (simulated)" }
        return line
    }

    /// ` (IPv6: limited)`: the families whose own check said something else than the verdict.
    private var familyNote: String {
        let notes = [("IPv4", current.ipv4Connectivity), ("IPv6", current.ipv6Connectivity)].compactMap { name, verdict -> String? in
            guard verdict != current.connectivity else { return nil }
            switch verdict {
            case .portal, .limited, .full: return "\(name): \(verdict.rawValue)"
            case .unknown, .none: return nil
            }
        }
        return notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")"
    }
}
