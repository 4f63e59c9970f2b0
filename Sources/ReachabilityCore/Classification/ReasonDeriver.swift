/// Tells why a snapshot changed: the most significant difference, preferring the interfaces
/// that the status is about (old and new primary), so `carrierLost eth0` wins over an
/// address appearing on an unrelated bridge.
public enum ReasonDeriver {
    public static func reason(from old: NetworkSnapshot, to new: NetworkSnapshot,
                              focus: Set<String> = []) -> Reason? {
        reason(from: IndexedSnapshot(old), to: IndexedSnapshot(new), focusing: Array(focus))
    }

    /// The same for two snapshots grouped by index, every index compared.
    static func reason(from old: IndexedSnapshot, to new: IndexedSnapshot, focusing focus: [String]) -> Reason? {
        let indexes = Set(old.slices.keys).union(new.slices.keys)
        return reason(slices: indexes.map { (old.slice(at: $0), new.slice(at: $0)) },
                      modemsChanged: old.modems != new.modems, oldProbe: old.probe, newProbe: new.probe,
                      verdictMoved: old.probePath != new.probePath,
                      rules: old.rules == new.rules ? nil : (old.rules, new.rules), focusing: focus)
    }

    /// The same reason from the slices that changed, each as it was and as it is: what differs
    /// lies in them, so the slices nothing touched need not be compared. `modemsChanged`,
    /// `oldProbe` and `newProbe` describe the rest of the two snapshots.
    public static func reason(slices: [(old: LinkSlice, new: LinkSlice)], modemsChanged: Bool,
                              oldProbe: Probe?, newProbe: Probe?, focus: Set<String> = []) -> Reason? {
        reason(slices: slices, modemsChanged: modemsChanged, oldProbe: oldProbe, newProbe: newProbe, focusing: Array(focus))
    }

    /// The same with the names in focus as a list: the tracker's are at most four.
    /// `rules`: the rule lists before and after, when they differ.
    /// `verdictMoved`: the checker's publication is about another path than before (the same
    /// result, or "not checked", for a new path is still the checker's doing).
    static func reason(slices: [(old: LinkSlice, new: LinkSlice)], modemsChanged: Bool,
                       oldProbe: Probe?, newProbe: Probe?, verdictMoved: Bool = false,
                       rules: (old: [RoutingRule], new: [RoutingRule])? = nil,
                       focusing focus: [String]) -> Reason? {
        var candidates: [Reason] = []
        if let rules {
            for rule in rules.old where !rules.new.contains(rule) {
                candidates.append(Reason(code: .ruleRemoved, detail: rule.description))
            }
            for rule in rules.new where !rules.old.contains(rule) {
                candidates.append(Reason(code: .ruleAdded, detail: rule.description))
            }
        }
        for (old, new) in slices where old != new {
            switch (old.link, new.link) {
            case (nil, let now?):
                candidates.append(Reason(code: .linkAdded, interface: now.name))
            case (let before?, nil):
                candidates.append(Reason(code: .linkRemoved, interface: before.name))
            case (let before?, let now?):
                if before.up && !now.up { candidates.append(Reason(code: .linkDown, interface: now.name)) }
                if !before.up && now.up { candidates.append(Reason(code: .linkUp, interface: now.name)) }
                if before.carrier && !now.carrier { candidates.append(Reason(code: .carrierLost, interface: now.name)) }
                if !before.carrier && now.carrier { candidates.append(Reason(code: .carrierGained, interface: now.name)) }
            case (nil, nil):
                break
            }
            // Addresses and routes of a slice belong to its index: that link names them.
            let name = new.link?.name ?? old.link?.name
            // The addresses as a status lists them: one still in duplicate address detection
            // (tentative) is not there yet, so passing it adds the address and falling back to
            // it removes the address — not the other way round.
            if old.shownAddresses != new.shownAddresses {
                for cidr in old.shownAddresses where !new.shownAddresses.contains(cidr) {
                    candidates.append(Reason(code: .addressRemoved, interface: name, detail: cidr))
                }
                for cidr in new.shownAddresses where !old.shownAddresses.contains(cidr) {
                    candidates.append(Reason(code: .addressAdded, interface: name, detail: cidr))
                }
            }
            if old.routes != new.routes {
                for route in old.routes where !new.routes.contains(route) {
                    candidates.append(Reason(code: .routeRemoved, interface: name, detail: describe(route)))
                }
                for route in new.routes where !old.routes.contains(route) {
                    candidates.append(Reason(code: .routeAdded, interface: name, detail: describe(route)))
                }
            }
            if old.announcements != new.announcements, old.interface != new.interface,
               let detail = describe(old.announcements, new.announcements) {
                candidates.append(Reason(code: .routerAdvertisement, interface: name, detail: detail))
            }
        }
        if modemsChanged { candidates.append(Reason(code: .modemChanged)) }
        if oldProbe?.comparable != newProbe?.comparable || verdictMoved {
            candidates.append(Reason(code: .probeResult, detail: newProbe.map { $0.result.rawValue }))
        }
        if let reason = candidates.min(by: { rank($0, focus) < rank($1, focus) }) { return reason }
        return linkAttributeChange(slices: slices, focus: focus)
    }

    /// Only when nothing above explains a change: the kernel settles operstate after up/carrier
    /// (linkwatch, about a second later), and a link can be renamed. Named by where it went,
    /// rather than left unexplained.
    private static func linkAttributeChange(slices: [(old: LinkSlice, new: LinkSlice)], focus: [String]) -> Reason? {
        var candidates: [Reason] = []
        for (old, new) in slices {
            guard let before = old.link, let now = new.link else { continue }
            if before.operstate != now.operstate {
                candidates.append(Reason(code: now.operstate == "up" ? .linkUp : .linkDown, interface: now.name,
                                         detail: "operstate \(before.operstate) → \(now.operstate)"))
            }
            if before.name != now.name {
                candidates.append(Reason(code: .linkAdded, interface: now.name, detail: "renamed from \(before.name)"))
            }
        }
        return candidates.min { rank($0, focus) < rank($1, focus) }
    }

    private static func rank(_ reason: Reason, _ focus: [String]) -> (Int, Int, String, String) {
        let inFocus = reason.interface.map { focus.contains($0) } ?? false
        return (inFocus ? 0 : 1, priority(reason.code), reason.interface ?? "", reason.detail ?? "")
    }

    /// Lower is more significant.
    static func priority(_ code: Reason.Code) -> Int {
        switch code {
        case .linkRemoved: return 0
        case .linkDown: return 1
        case .carrierLost: return 2
        case .linkAdded: return 3
        case .linkUp: return 4
        case .carrierGained: return 5
        case .killSwitch: return 6
        case .routeRemoved, .ruleRemoved: return 7
        case .addressRemoved: return 8
        case .routeAdded, .ruleAdded: return 9
        case .addressAdded: return 10
        case .modemChanged, .wifiChanged, .roamed, .wifiSignalChanged: return 11
        case .routerAdvertisement: return 12
        case .probeResult, .qualityChanged, .costChanged, .dataStall: return 13
        case .initial, .resync, .configReloaded, .simulation, .sleeping, .resumed: return 14
        }
    }

    /// What differs between two interfaces' announcements, first difference first: `captive
    /// portal API https://…`, `DNS 2001:db8::53 gone`, …; nil when what a status shows is equal.
    static func describe(_ old: RouterAnnouncements?, _ new: RouterAnnouncements?) -> String? {
        var parts: [String] = []
        if old?.captivePortal != new?.captivePortal {
            parts.append(new?.captivePortal.map { "captive portal API \($0)" } ?? "captive portal API gone")
        }
        let oldServers = old?.dnsServers ?? [], newServers = new?.dnsServers ?? []
        if oldServers != newServers {
            let gone = oldServers.filter { !newServers.contains($0) }
            parts.append(newServers.isEmpty ? "DNS \(gone.joined(separator: " ")) gone" : "DNS \(newServers.joined(separator: " "))")
        }
        let oldDomains = old?.searchDomains ?? [], newDomains = new?.searchDomains ?? []
        if oldDomains != newDomains {
            parts.append(newDomains.isEmpty ? "search domains gone" : "search domains \(newDomains.joined(separator: " "))")
        }
        if old?.nat64Prefix != new?.nat64Prefix {
            parts.append(new?.nat64Prefix.map { "NAT64 prefix \($0)" } ?? "NAT64 prefix gone")
        }
        return parts.isEmpty ? nil : TerminalText.escaped(parts.joined(separator: ", "))
    }

    static func describe(_ route: RouteState) -> String {
        let destination = route.isDefault ? "default" : "\(route.destination ?? "?")/\(route.prefixLength)"
        let type = route.type == .unicast ? "" : "\(route.type.rawValue) "
        let via = route.gateway.map { " via \($0)" } ?? ""
        let table = route.table == RouteState.mainTable ? "" : " table \(RoutingRule.tableName(route.table))"
        return "\(type)\(destination)\(via)\(table) metric \(route.metric)"
    }
}
