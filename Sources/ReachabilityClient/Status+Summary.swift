import FoundationEssentials
import ReachabilityCore

extension Status {
    /// One human line, as `reachctl status` prints it: `online · wifi (wlan0, "cafe", 5 GHz, 3 bars) · internet: full · IPv4`,
    /// `online · vpn wg0 over ethernet (eth0) · …` under a tunnel, or `offline` (`offline · kill
    /// switch` when a refusing route or rule decides); ` · simulated` at the end while a simulation is on.
    /// Behind a captive portal: `internet: portal · log in at https://… · 12 min left`. The
    /// path's measured quality ends the line: `· quality: good (4g, 48 ms)`. When a
    /// family's own check said something else, it follows the verdict: `internet: full (IPv6: limited)`;
    /// a failed check names its step: `internet: limited (DNS)`. While the apps' traffic over
    /// the path goes unanswered the stall follows the verdict: `internet: full · stalled 12 s
    /// (tcp, 96 % retransmitted)` (only the check moves the verdict).
    public var summary: String { summary(now: Date()) }

    /// The summary with the session time a captive-portal API gave counted down to `now`.
    public func summary(now: Date) -> String {
        simulated ? realSummary(now: now) + " · simulated" : realSummary(now: now)
    }

    private func realSummary(now: Date) -> String {
        guard reachable else {
            if routing.contains(where: \.isRefusal) { return "offline · kill switch" }
            return flags.contains(.connectionRequired) ? "offline · connection required" : "offline"
        }
        var parts = ["online"]
        var transport = status.rawValue
        if let primary {
            // A Wi-Fi owner's view joins the name: `wifi (wlan0, "cafe", 5 GHz, 3 bars)`.
            let wifi = primary.wifi.map(\.summary).flatMap { $0.isEmpty ? nil : ", " + $0 } ?? ""
            transport += " (\(primary.name)\(wifi))"
        }
        if let vpn { transport = "vpn \(vpn.name) over " + transport }
        parts.append(transport)
        if let cellular, let technology = cellular.accessTechnology { parts.append("cellular: \(technology)\(cellular.roaming == true ? ", roaming" : "")") }
        // With the check off, `unknown` is for good, not "not yet": say which.
        parts.append(connectivityCheck ? "internet: \(connectivity.rawValue)" + familyNote : "internet: not checked")
        if connectivity == .portal, let portal = probe?.portalUrl { parts.append("log in at \(portal)") }
        if let left = probe?.sessionLeft(now: now) { parts.append(left) }
        if let stall = pathStall { parts.append(stall.summary(now: now)) }
        let families = [ipv4 ? "IPv4" : nil, ipv6 ? "IPv6" : nil].compactMap { $0 }
        if !families.isEmpty { parts.append(families.joined(separator: " + ")) }
        if expensive { parts.append("expensive") }
        if let linkQuality { parts.append("quality: \(linkQuality.summary)") }
        return parts.joined(separator: " · ")
    }
}

extension Status {
    /// ` (IPv6: limited)` when a family's own check said something else than the overall
    /// verdict, ` (DNS)` when the check failed at the resolver; empty otherwise. A family is
    /// named only when its verdict says something: one never checked (`unknown`: not yet, or an
    /// address-literal URL checks its own family alone) is no warning, and one without a path
    /// (`none`) is already told by the families at the end of the line (`· IPv4`). Without an
    /// overall verdict (`unknown`, `none`) there is nothing to set a family against.
    var familyNote: String {
        var notes: [String] = []
        let judged: Bool
        switch connectivity {
        case .unknown, .none: judged = false
        case .portal, .limited, .full: judged = true
        }
        for (name, verdict) in [("IPv4", ipv4Connectivity), ("IPv6", ipv6Connectivity)] where judged && verdict != connectivity {
            switch verdict {
            case .portal, .limited, .full: notes.append("\(name): \(verdict.rawValue)")
            case .unknown, .none: break
            }
        }
        if connectivity != .full, let stage = probe?.failedStage, stage == .resolve { notes.append("DNS") }
        return notes.isEmpty ? "" : " (" + notes.joined(separator: ", ") + ")"
    }

    /// `reachctl status --verbose`'s line about what the primary's network announces, if it
    /// announces anything: `eth0 announces: DNS 2001:db8::53 · search corp.example · NAT64
    /// 64:ff9b::/96 · captive-portal API https://…`.
    public var announcementLine: String? {
        guard let primary else { return nil }
        var parts: [String] = []
        if !primary.dns.isEmpty { parts.append("DNS " + primary.dns.joined(separator: " ")) }
        if !primary.searchDomains.isEmpty { parts.append("search " + primary.searchDomains.joined(separator: " ")) }
        if let prefix = primary.nat64Prefix { parts.append("NAT64 \(prefix)") }
        if let api = primary.captivePortalApi { parts.append("captive-portal API \(api)") }
        if let venue = probe?.venueInfoUrl { parts.append("venue \(venue)") }
        return parts.isEmpty ? nil : "\(primary.name) announces: " + parts.joined(separator: " · ")
    }

    /// `reachctl status --verbose`'s lines after the summary: per family, where the kernel
    /// sends an app's connection to the internet and which rule and table decided.
    /// `ipv4 1.1.1.1 → wg0 · table 51820 (rule 32765)`, `ipv6 2606:… → unreachable · table main (rule 32766)`.
    public var routingLines: [String] {
        routing.map { path in
            var target: String
            switch path.result {
            case .route:
                target = path.interface ?? "?"
                if let gateway = path.gateway { target += " via \(gateway)" }
            case .unreachable, .blackhole, .prohibit: target = path.result.rawValue
            case .none: target = "no route"
            }
            let decided = path.decidedBy
            return "\(path.family.rawValue) \(path.destination) → \(target)" + (decided.isEmpty ? "" : " · \(decided)")
        }
    }
}

extension RoutePath {
    /// A refusing route or rule decided (a kill switch, or a network set up to refuse).
    public var isRefusal: Bool {
        switch result {
        case .unreachable, .blackhole, .prohibit: return true
        case .route, .none: return false
        }
    }
}

extension Status {
    /// `reachctl wait`'s condition: reachable; with `internet`, connectivity full; with
    /// `interface`, that interface is up with carrier and an address (as
    /// systemd-networkd-wait-online's `--interface`).
    /// With `family`, that family alone: it has a path, and with `internet` its own verdict is full.
    /// With the connectivity check off (`connectivityCheck` false) nothing would ever say full:
    /// `internet` asks for a reachable path alone, as NetworkManager counts a path as full then.
    /// With `quality`, the path's measured `linkQuality.level` is at least that (`unknown` and no
    /// measurement meet only `unknown`).
    public func satisfies(internet: Bool, interface: String?, family: AddressFamily? = nil,
                          quality: LinkQuality.Level? = nil) -> Bool {
        guard reachable else { return false }
        if let quality, (linkQuality?.level ?? .unknown) < quality { return false }
        let checked = internet && connectivityCheck
        switch family {
        case nil:
            if checked && connectivity != .full { return false }
        case .ipv4?:
            if !ipv4 || (checked && ipv4Connectivity != .full) { return false }
        case .ipv6?:
            if !ipv6 || (checked && ipv6Connectivity != .full) { return false }
        }
        if let interface {
            guard let link = interfaces.first(where: { $0.name == interface }),
                  link.up, link.carrier, !link.addresses.isEmpty else { return false }
        }
        return true
    }
}
