import FoundationEssentials

/// Pure classification: a snapshot of links, addresses, routes, modems and the last probe in,
/// the machine's `Status` out. No I/O, so every rule is tested without a kernel.
public enum Classifier {
    /// Classifies `snapshot`. `since` becomes the status's `since`. Connectivity and probe follow
    /// `ConnectivityRule` from the snapshot's verdict and `previous`, the status before this
    /// evaluation (nil: none, as at start); a not-reachable probe made here is stamped `now`.
    public static func classify(_ snapshot: NetworkSnapshot, since: Date, previous: Status? = nil, now: Date? = nil) -> Status {
        let facts = Facts(snapshot)
        let usableDefaults = snapshot.routes
            .filter { $0.table == RouteState.mainTable && $0.isDefault && $0.type == .unicast && facts.isUsable(linkIndex: $0.oif, family: $0.family) }
            .sorted(by: routeOrder)
        let physicalDefaults = usableDefaults.filter { facts.kind(of: $0.oif) != .vpn }

        let vpnRoute = snapshot.routes
            .filter { $0.table == RouteState.mainTable && ($0.isDefault || $0.isHalfDefault) && $0.type == .unicast
                      && facts.kind(of: $0.oif) == .vpn && facts.isUsable(linkIndex: $0.oif, family: $0.family) }
            .sorted(by: routeOrder).first
        let vpnLink = vpnRoute.flatMap { snapshot.links[$0.oif] }

        // Beneath a VPN that holds the only default route, the transport is the link that carries
        // the route to the VPN server: the best usable non-VPN link with any gateway route.
        let underlayRoute = physicalDefaults.first ?? (vpnLink == nil ? nil : snapshot.routes
            .filter { $0.table == RouteState.mainTable && $0.type == .unicast && $0.gateway != nil
                      && facts.kind(of: $0.oif) != .vpn && facts.isUsable(linkIndex: $0.oif, family: $0.family) }
            .sorted(by: routeOrder).first)
        let primaryLink = underlayRoute.flatMap { snapshot.links[$0.oif] } ?? vpnLink

        let interfaces = snapshot.links.values.sorted { $0.index < $1.index }.map { facts.interface(for: $0) }
        let primary = primaryLink.map { facts.interface(for: $0) }
        let vpn = vpnLink.map { facts.interface(for: $0) }

        let primaryKind = primaryLink.flatMap { facts.kind(of: $0.index) }
        let modem = primaryLink.flatMap { facts.modem(for: $0.name) }
        let networkStatus = status(forPrimaryKind: primaryKind, modem: modem)
        let reachable = networkStatus.isReachable

        let cellular = modem.map { modem -> Cellular in
            let newest = ModemAccessTechnology(rawValue: modem.accessTechnologies).newest
            return Cellular(generation: newest?.generation?.rawValue, accessTechnology: newest?.name,
                            modem: modem.path, interface: primaryLink?.name,
                            signalQuality: modem.signalQuality, roaming: modem.roaming)
        }

        var gateways: [String] = []
        if let primaryLink {
            for route in usableDefaults where route.oif == primaryLink.index {
                if let gateway = route.gateway, !gateways.contains(gateway) { gateways.append(gateway) }
            }
        }

        var flags: [ReachabilityFlag] = []
        if reachable { flags.append(.reachable) }
        if !reachable && facts.hasLinkAwaitingConfiguration { flags.append(.connectionRequired) }
        if vpn != nil { flags.append(.transientConnection) }
        if networkStatus.isWWAN { flags.append(.isWWAN) }

        let path = Status(
            status: networkStatus, reachable: reachable, connectivity: reachable ? .unknown : .none,
            primary: primary, vpn: vpn, cellular: cellular,
            expensive: networkStatus.isWWAN || (primary?.metered ?? false) || primaryKind == .wwan,
            ipv4: usableDefaults.contains { $0.family == .ipv4 },
            ipv6: usableDefaults.contains { $0.family == .ipv6 },
            gateways: gateways, flags: flags, interfaces: interfaces, probe: nil, since: since)
        return ConnectivityRule.apply(to: path, previous: previous, verdict: snapshot.verdict, now: now ?? since)
    }

    /// The status value for a primary interface of `kind` (nil: no primary).
    public static func status(forPrimaryKind kind: InterfaceKind?, modem: ModemState?) -> NetworkStatus {
        guard let kind else { return .notReachable }
        switch kind {
        case .ethernet, .bridge: return .ethernet
        case .wifi: return .wifi
        case .wwan:
            guard let modem, let generation = ModemAccessTechnology(rawValue: modem.accessTechnologies).newest?.generation
            else { return .wwan }
            return generation.networkStatus
        case .loopback: return .notReachable
        case .vpn, .virtual, .other: return .unknown
        }
    }

    /// Lowest metric first; IPv4 before IPv6 at equal metric; then interface index, so the
    /// order (and the primary) never depends on set iteration.
    static func routeOrder(_ a: RouteState, _ b: RouteState) -> Bool {
        if a.metric != b.metric { return a.metric < b.metric }
        if a.family != b.family { return a.family == .ipv4 }
        if a.oif != b.oif { return a.oif < b.oif }
        return (a.gateway ?? "") < (b.gateway ?? "")
    }
}

/// Look-ups over one snapshot, built once per classification.
private struct Facts {
    let snapshot: NetworkSnapshot
    let modemsByInterface: [String: ModemState]
    let addressesByLink: [Int: [AddressState]]

    init(_ snapshot: NetworkSnapshot) {
        self.snapshot = snapshot
        var modems: [String: ModemState] = [:]
        for modem in snapshot.modems { for name in modem.interfaces { modems[name] = modem } }
        modemsByInterface = modems
        addressesByLink = Dictionary(grouping: snapshot.addresses, by: \.ifindex)
    }

    func modem(for name: String) -> ModemState? { modemsByInterface[name] }

    /// An interface that a modem owns is `wwan` whatever sysfs says.
    func kind(of index: Int) -> InterfaceKind? {
        guard let link = snapshot.links[index] else { return nil }
        return modemsByInterface[link.name] == nil ? link.kind : .wwan
    }

    func isUsable(linkIndex: Int, family: AddressFamily) -> Bool {
        guard let link = snapshot.links[linkIndex], link.kind != .loopback, link.up, link.carrier else { return false }
        return addressesByLink[linkIndex, default: []].contains { $0.family == family && $0.isUsable }
    }

    /// A non-loopback link that is up with carrier but has no usable address or default route yet.
    var hasLinkAwaitingConfiguration: Bool {
        snapshot.links.values.contains { link in
            link.kind != .loopback && link.up && link.carrier
        }
    }

    func interface(for link: LinkState) -> Interface {
        let addresses = addressesByLink[link.index, default: []]
            .filter { !$0.tentative }
            .sorted { ($0.family == .ipv4 ? 0 : 1, $0.address, $0.prefixLength) < ($1.family == .ipv4 ? 0 : 1, $1.address, $1.prefixLength) }
            .map(\.cidr)
        return Interface(name: link.name, index: link.index, kind: kind(of: link.index) ?? link.kind,
                         up: link.up, carrier: link.carrier, operstate: link.operstate,
                         addresses: addresses, metered: link.metered)
    }
}
