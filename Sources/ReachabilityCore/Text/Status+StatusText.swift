extension Status {
    /// The one-line summary reachd sends as systemd's `STATUS=` (shown by `systemctl status`),
    /// e.g. `wifi via wlan0, internet full`, `wwan4G via wwan0, vpn tun0, internet captive portal`,
    /// `not reachable`; `simulated: ` in front while a simulation is on. Interface names are
    /// escaped (`TerminalText`): a control character in one cannot end the line or reach
    /// `systemctl status` raw.
    public var systemdStatusText: String {
        let text = realStatusText
        return simulated ? "simulated: \(text)" : text
    }

    private var realStatusText: String {
        guard reachable, status.isReachable else { return "not reachable" }
        var parts: [String] = []
        if let primary { parts.append("\(status.rawValue) via \(TerminalText.escaped(primary.name))") } else { parts.append(status.rawValue) }
        if let vpn { parts.append("vpn \(TerminalText.escaped(vpn.name))") }
        parts.append("internet \(connectivity.statusTextName)")
        // Cellular is expensive by nature; say "metered" only when configuration made it so.
        if expensive && !status.isWWAN { parts.append("metered") }
        return parts.joined(separator: ", ")
    }
}

extension Connectivity {
    /// The words `systemdStatusText` uses after "internet".
    var statusTextName: String {
        switch self {
        case .unknown: return "not checked"
        case .none: return "none"
        case .portal: return "captive portal"
        case .limited: return "limited"
        case .full: return "full"
        }
    }
}
