/// Tells why a snapshot changed: the most significant difference, preferring the interfaces
/// that the status is about (old and new primary), so `carrierLost eth0` wins over an
/// address appearing on an unrelated bridge.
public enum ReasonDeriver {
    public static func reason(from old: NetworkSnapshot, to new: NetworkSnapshot,
                              focus: Set<String> = []) -> Reason? {
        var candidates: [Reason] = []
        for (index, link) in new.links where old.links[index] == nil {
            candidates.append(Reason(code: .linkAdded, interface: link.name))
        }
        for (index, link) in old.links where new.links[index] == nil {
            candidates.append(Reason(code: .linkRemoved, interface: link.name))
        }
        for (index, now) in new.links {
            guard let before = old.links[index] else { continue }
            if before.up && !now.up { candidates.append(Reason(code: .linkDown, interface: now.name)) }
            if !before.up && now.up { candidates.append(Reason(code: .linkUp, interface: now.name)) }
            if before.carrier && !now.carrier { candidates.append(Reason(code: .carrierLost, interface: now.name)) }
            if !before.carrier && now.carrier { candidates.append(Reason(code: .carrierGained, interface: now.name)) }
        }
        func name(_ index: Int) -> String? { new.links[index]?.name ?? old.links[index]?.name }
        for address in old.addresses.subtracting(new.addresses) {
            candidates.append(Reason(code: .addressRemoved, interface: name(address.ifindex), detail: address.cidr))
        }
        for address in new.addresses.subtracting(old.addresses) {
            candidates.append(Reason(code: .addressAdded, interface: name(address.ifindex), detail: address.cidr))
        }
        for route in old.routes.subtracting(new.routes) {
            candidates.append(Reason(code: .routeRemoved, interface: name(route.oif), detail: describe(route)))
        }
        for route in new.routes.subtracting(old.routes) {
            candidates.append(Reason(code: .routeAdded, interface: name(route.oif), detail: describe(route)))
        }
        if old.modems != new.modems { candidates.append(Reason(code: .modemChanged)) }
        if old.probe?.comparable != new.probe?.comparable {
            candidates.append(Reason(code: .probeResult, detail: new.probe.map { $0.result.rawValue }))
        }
        if let reason = candidates.min(by: { rank($0, focus) < rank($1, focus) }) { return reason }
        return linkAttributeChange(from: old, to: new, focus: focus)
    }

    /// Only when nothing above explains a change: the kernel settles operstate after up/carrier
    /// (linkwatch, about a second later), and a link can be renamed. Named by where it went,
    /// rather than left unexplained.
    private static func linkAttributeChange(from old: NetworkSnapshot, to new: NetworkSnapshot,
                                            focus: Set<String>) -> Reason? {
        var candidates: [Reason] = []
        for (index, now) in new.links {
            guard let before = old.links[index] else { continue }
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

    private static func rank(_ reason: Reason, _ focus: Set<String>) -> (Int, Int, String, String) {
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
        case .routeRemoved: return 6
        case .addressRemoved: return 7
        case .routeAdded: return 8
        case .addressAdded: return 9
        case .modemChanged: return 10
        case .probeResult: return 11
        case .initial, .resync, .configReloaded, .simulation: return 12
        }
    }

    static func describe(_ route: RouteState) -> String {
        let destination = route.isDefault ? "default" : "\(route.destination ?? "?")/\(route.prefixLength)"
        let via = route.gateway.map { " via \($0)" } ?? ""
        return "\(destination)\(via) metric \(route.metric)"
    }
}
