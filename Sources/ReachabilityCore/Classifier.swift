import FoundationEssentials

/// Pure classification: a snapshot of links, addresses, routes, modems and the last probe in,
/// the machine's `Status` out. No I/O, so every rule is tested without a kernel.
public enum Classifier {
    /// Classifies `snapshot`. `since` becomes the status's `since`. Connectivity and probe follow
    /// `ConnectivityRule` from the snapshot's verdict and `previous`, the status before this
    /// evaluation (nil: none, as at start); a not-reachable probe made here is stamped `now`.
    public static func classify(_ snapshot: NetworkSnapshot, since: Date, previous: Status? = nil, now: Date? = nil) -> Status {
        classify(IndexedSnapshot(snapshot), since: since, previous: previous, now: now)
    }

    /// Classifies `snapshot` as `classify(_:since:previous:now:)` does. Its work grows with the
    /// links and their default-route candidates; each slice brings its addresses already
    /// filtered and sorted, so the monitor that keeps the slices pays for a link's addresses and
    /// routes only when a message touches that link.
    public static func classify(_ snapshot: IndexedSnapshot, since: Date, previous: Status? = nil, now: Date? = nil) -> Status {
        let facts = Facts(snapshot)
        var usableDefaults: [RouteState] = []
        var vpnRoute: RouteState?
        var gatewayRoute: RouteState?
        for index in snapshot.linkIndexes {
            guard let slice = snapshot.slices[index], !slice.candidateRoutes.isEmpty else { continue }
            let isVPN = facts.kind(of: index) == .vpn
            for route in slice.candidateRoutes where slice.isUsable(family: route.family) {
                if route.isDefault { usableDefaults.append(route) }
                if isVPN && (route.isDefault || route.isHalfDefault) {
                    if vpnRoute.map({ routeOrder(route, $0) }) ?? true { vpnRoute = route }
                }
                if !isVPN && route.gateway != nil {
                    if gatewayRoute.map({ routeOrder(route, $0) }) ?? true { gatewayRoute = route }
                }
            }
        }
        usableDefaults.sort(by: routeOrder)
        let physicalDefault = usableDefaults.first { facts.kind(of: $0.oif) != .vpn }
        let vpnLink = vpnRoute.flatMap { snapshot.link($0.oif) }

        // Beneath a VPN that holds the only default route, the transport is the link that carries
        // the route to the VPN server: the best usable non-VPN link with any gateway route.
        let underlayRoute = physicalDefault ?? (vpnLink == nil ? nil : gatewayRoute)
        let primaryLink = underlayRoute.flatMap { snapshot.link($0.oif) } ?? vpnLink

        let interfaces = snapshot.linkIndexes.compactMap { index in snapshot.slices[index].flatMap { facts.interface(for: $0) } }
        // Both are links of the snapshot, so their interfaces are in the list: taken from it
        // rather than made again from copies of their slices.
        let primary = primaryLink.flatMap { link in interfaces.first { $0.index == link.index } }
        let vpn = vpnLink.flatMap { link in interfaces.first { $0.index == link.index } }

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
    let snapshot: IndexedSnapshot
    let modemsByInterface: [String: ModemState]

    init(_ snapshot: IndexedSnapshot) {
        self.snapshot = snapshot
        var modems: [String: ModemState] = [:]
        for modem in snapshot.modems { for name in modem.interfaces { modems[name] = modem } }
        modemsByInterface = modems
    }

    func modem(for name: String) -> ModemState? {
        modemsByInterface.isEmpty ? nil : modemsByInterface[name]
    }

    /// An interface that a modem owns is `wwan` whatever sysfs says.
    func kind(of index: Int) -> InterfaceKind? {
        guard let link = snapshot.link(index) else { return nil }
        return modem(for: link.name) == nil ? link.kind : .wwan
    }

    /// A non-loopback link that is up with carrier but has no usable address or default route yet.
    var hasLinkAwaitingConfiguration: Bool {
        snapshot.linkIndexes.contains { index in
            guard let link = snapshot.link(index) else { return false }
            return link.kind != .loopback && link.up && link.carrier
        }
    }

    func interface(for slice: LinkSlice) -> Interface? {
        guard var interface = slice.interface else { return nil }
        if modem(for: interface.name) != nil { interface.kind = .wwan }
        return interface
    }
}
