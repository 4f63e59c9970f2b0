import ReachabilityCore

extension Status {
    /// One human line, as `reachctl status` prints it: `online · wifi (wlan0) · internet: full · IPv4`,
    /// or `offline`; ` · simulated` at the end while a simulation is on.
    public var summary: String {
        simulated ? realSummary + " · simulated" : realSummary
    }

    private var realSummary: String {
        guard reachable else {
            return flags.contains(.connectionRequired) ? "offline · connection required" : "offline"
        }
        var parts = ["online"]
        var transport = status.rawValue
        if let primary { transport += " (\(primary.name))" }
        parts.append(transport)
        if let vpn { parts.append("vpn (\(vpn.name))") }
        if let cellular, let technology = cellular.accessTechnology { parts.append("cellular: \(technology)\(cellular.roaming == true ? ", roaming" : "")") }
        parts.append("internet: \(connectivity.rawValue)")
        let families = [ipv4 ? "IPv4" : nil, ipv6 ? "IPv6" : nil].compactMap { $0 }
        if !families.isEmpty { parts.append(families.joined(separator: " + ")) }
        if expensive { parts.append("expensive") }
        return parts.joined(separator: " · ")
    }
}

extension Status {
    /// `reachctl wait`'s condition: reachable; with `internet`, connectivity full; with
    /// `interface`, that interface is up with carrier and an address (as
    /// systemd-networkd-wait-online's `--interface`).
    public func satisfies(internet: Bool, interface: String?) -> Bool {
        guard reachable else { return false }
        if internet && connectivity != .full { return false }
        if let interface {
            guard let link = interfaces.first(where: { $0.name == interface }),
                  link.up, link.carrier, !link.addresses.isEmpty else { return false }
        }
        return true
    }
}
