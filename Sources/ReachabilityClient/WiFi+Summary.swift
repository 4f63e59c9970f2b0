import ReachabilityCore

extension WiFi {
    /// What `reachctl status` puts beside the interface's name: `"cafe", 5 GHz, 3 bars`; the
    /// parts the owner did not report are left out. The name is already escaped (`WiFiSSID`).
    public var summary: String {
        var parts: [String] = []
        if let ssid { parts.append("\"\(ssid)\"") }
        if let band { parts.append(band.spoken) }
        if let bars { parts.append(bars == 1 ? "1 bar" : "\(bars) bars") }
        return parts.joined(separator: ", ")
    }

    /// `reachctl status --verbose`'s line of figures: `wifi "cafe" · 02:11:22:33:44:55 ·
    /// 5180 MHz (5 GHz) · -61 dBm · 59 % · 3 bars · 866.7 Mbit/s · from iwd` (the BSSID only
    /// for root callers, who are sent it).
    public var figures: String {
        var parts = ["wifi " + (ssid.map { "\"\($0)\"" } ?? "(no name)")]
        if let bssid { parts.append(bssid) }
        if let frequencyMHz { parts.append("\(frequencyMHz) MHz" + (band.map { " (\($0.spoken))" } ?? "")) }
        if let signalDbm { parts.append("\(signalDbm) dBm") }
        if let strengthPercent { parts.append("\(strengthPercent) %") }
        if let bars { parts.append(bars == 1 ? "1 bar" : "\(bars) bars") }
        if let txBitrateKbps { parts.append(Self.rate(txBitrateKbps)) }
        parts.append("from \(owner.rawValue)")
        return parts.joined(separator: " · ")
    }

    /// `866.7 Mbit/s`, `54 Mbit/s`, `1.2 Gbit/s`, `500 kbit/s`.
    static func rate(_ kbps: Int) -> String {
        func trimmed(_ value: Double) -> String {
            let rounded = (value * 10).rounded() / 10
            return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        }
        if kbps >= 1_000_000 { return trimmed(Double(kbps) / 1_000_000) + " Gbit/s" }
        if kbps >= 1_000 { return trimmed(Double(kbps) / 1_000) + " Mbit/s" }
        return "\(kbps) kbit/s"
    }
}

extension WiFiBand {
    /// `2.4 GHz`, `5 GHz`, `6 GHz`.
    public var spoken: String {
        switch self {
        case .band2_4GHz: "2.4 GHz"
        case .band5GHz: "5 GHz"
        case .band6GHz: "6 GHz"
        }
    }
}
