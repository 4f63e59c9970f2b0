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
        let lookupRoutes = self.lookupRoutes(snapshot)
        var gatewayRoute: RouteState?
        for slice in snapshot.slices.values where !slice.gatewayRoutes.isEmpty && facts.kind(of: slice.index) != .vpn {
            for route in slice.gatewayRoutes where slice.isUsable(family: route.family) {
                if gatewayRoute.map({ routeOrder(route, $0) }) ?? true { gatewayRoute = route }
            }
        }
        // The closures hold the slices alone: a copy of the whole snapshot would be one per call.
        let slices = snapshot.slices
        let group: (Int) -> UInt32 = { slices[$0]?.link?.group ?? 0 }
        let paths = AddressFamily.allCases.map { family in
            InternetPath.decide(family, routes: lookupRoutes, rules: snapshot.rules(of: family), interfaceGroup: group)
        }

        // Each family's way out, the better one first (lowest metric, IPv4 at equal metric).
        let hops = paths.compactMap { $0.decision.routes.first }.sorted(by: routeOrder)
        let vpnHop = hops.first { facts.kind(of: $0.oif) == .vpn }
        // A CLAT carries IPv4 over the uplink beneath it: the uplink is the transport.
        let physicalHop = hops.first { facts.kind(of: $0.oif) != .vpn && !facts.isCLAT($0.oif) }
            ?? hops.first { facts.kind(of: $0.oif) != .vpn }
        // Beneath a tunnel that carries the better path, the transport is where the tunnel's own
        // packets leave (see `underlay`); else the physical path.
        var underlayRoute: RouteState?
        if let vpnHop, vpnHop == hops.first, let path = paths.first(where: { $0.family == vpnHop.family }) {
            underlayRoute = underlay(beneath: path, routes: lookupRoutes, rules: snapshot.rules(of: path.family),
                                     facts: facts, interfaceGroup: group) ?? physicalHop ?? gatewayRoute
        }
        let transport = underlayRoute ?? physicalHop
        let vpnLink = vpnHop.flatMap { snapshot.link($0.oif) }
        let primaryLink = transport.flatMap { snapshot.link($0.oif) } ?? vpnLink

        var interfaces = snapshot.linkIndexes.compactMap { index in snapshot.slices[index].flatMap { facts.interface(for: $0) } }
        if !snapshot.standbyVerdicts.isEmpty {
            // The path's own verdict is `connectivity`; a stale standby verdict on it would contradict it.
            let path = [transport?.oif, vpnHop?.oif].compactMap { $0 }
            for i in interfaces.indices where !path.contains(interfaces[i].index) {
                interfaces[i].connectivity = snapshot.standbyVerdicts[interfaces[i].index]?.result
            }
        }
        if snapshot.measuresQuality {
            // Only an uplink has a quality: the path's links, and the others that could carry
            // it (up, carrier, a usable default route through a gateway). A link that just lost
            // its carrier or route loses its quality in the same event, not in one of its own.
            let path = primaryLink == nil ? [] : [transport?.oif, vpnHop?.oif].compactMap { $0 }
            for i in interfaces.indices {
                let index = interfaces[i].index
                let uplink = path.contains(index) || (primaryLink != nil && isStandbyUplink(interfaces[i], slices[index]))
                interfaces[i].linkQuality = uplink
                    ? snapshot.linkQualities[index] ?? firstGuess(for: interfaces[i], modem: facts.modem(for: interfaces[i].name),
                                                                  now: now ?? since)
                    : nil
            }
        }
        if !snapshot.dataStalls.isEmpty, primaryLink != nil {
            // Like a quality, a stall belongs to an uplink, and goes with its carrier or route.
            let path = [transport?.oif, vpnHop?.oif].compactMap { $0 }
            for i in interfaces.indices {
                let index = interfaces[i].index
                guard let stall = snapshot.dataStalls[index] else { continue }
                if path.contains(index) || isStandbyUplink(interfaces[i], slices[index]) { interfaces[i].stall = stall }
            }
        }
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

        // The routers the transport's traffic goes through: the physical paths' and the tunnel's underlay.
        var routers: [Router] = []
        if let primaryLink {
            var routes = paths.flatMap { $0.decision.routes }
            if let underlayRoute { routes.append(underlayRoute) }
            for route in routes where route.oif == primaryLink.index {
                if let gateway = route.gateway { routers.append(Router(family: route.family, address: gateway)) }
            }
        }
        // Usually one router: no set to hash it into. Several are made distinct first.
        let (gateways, gatewaysOmitted) = Router.bounded(routers.count <= 1 ? routers : Array(Set(routers)))

        var flags: [ReachabilityFlag] = []
        if reachable { flags.append(.reachable) }
        if !reachable && facts.hasLinkAwaitingConfiguration { flags.append(.connectionRequired) }
        if vpn != nil { flags.append(.transientConnection) }
        if networkStatus.isWWAN { flags.append(.isWWAN) }
        // IPv6-only, the IPv4 internet reached through NAT64: by a CLAT carrying IPv4, or with no
        // IPv4 path while the uplink's routers announce a NAT64 prefix (PREF64).
        let ipv4Hop = paths[0].decision.routes.first
        if reachable, !paths[1].decision.routes.isEmpty,
           ipv4Hop.map({ facts.isCLAT($0.oif) }) ?? (primary?.nat64Prefix != nil) {
            flags.append(.nat64)
        }

        let path = Status(
            status: networkStatus, reachable: reachable, connectivity: reachable ? .unknown : .none,
            primary: primary, vpn: vpn, cellular: cellular,
            expensive: networkStatus.isWWAN || (primary?.metered ?? false) || primaryKind == .wwan,
            ipv4: !paths[0].decision.routes.isEmpty,
            ipv6: !paths[1].decision.routes.isEmpty,
            gateways: gateways, flags: flags, interfaces: interfaces, probe: nil, since: since,
            routing: paths.map { $0.routePath(linkName: { slices[$0]?.link?.name }) }, gatewaysOmitted: gatewaysOmitted,
            connectivityCheck: snapshot.connectivityCheck,
            // The path's quality: the tunnel's when it is measured (apps' traffic crosses it),
            // else its transport's.
            linkQuality: reachable ? (vpn?.linkQuality ?? primary?.linkQuality) : nil,
            constrained: primaryLink?.constrained ?? false)
        var verdict = snapshot.verdict
        // Without standby verdicts there is no failover verdict to take: no path is worked out.
        if !snapshot.standbyVerdicts.isEmpty, let way = ProbePath(path), verdict.path != way,
           let known = snapshot.standbyVerdicts[way.index],
           let from = previous.flatMap(ProbePath.init), from.index != way.index {
            // A failover to a standby uplink: its own last verdict, not the old path's, until
            // the check of the new path answers (its `checkedAt` tells how old it is). Later
            // evaluations keep it as the previous status's verdict (`ConnectivityRule`).
            verdict = ConnectivityRule.Verdict(probe: known, path: way)
        }
        return ConnectivityRule.apply(to: path, previous: previous, verdict: verdict, now: now ?? since)
    }

    /// What an uplink the estimator has not met yet starts with: its radio's class, else its
    /// technology's (`source: default`), as the estimator will give it.
    static func firstGuess(for interface: Interface, modem: ModemState?, now: Date) -> LinkQuality? {
        let generation = modem.flatMap { ModemAccessTechnology(rawValue: $0.accessTechnologies).newest?.generation }
        let uplink = QualityUplink(index: interface.index, name: interface.name,
                                   technology: LinkTechnology(kind: interface.kind, generation: generation),
                                   signal: modem?.signal ?? interface.wifi?.radioSignal)
        return UplinkQualityEstimate(uplink, now: ClockReading(wall: now, uptime: 0)).quality(LinkQualityEstimator.Configuration())
    }

    /// A link other than the path's that could carry traffic (`StandbyUplink`'s test): up with
    /// carrier, neither loopback nor a tunnel, with a usable default route through a gateway.
    static func isStandbyUplink(_ interface: Interface, _ slice: LinkSlice?) -> Bool {
        switch interface.kind {
        case .loopback, .vpn: return false
        case .ethernet, .wifi, .wwan, .bridge, .virtual, .other: break
        }
        guard interface.up, interface.carrier, let slice else { return false }
        return slice.gatewayRoutes.contains { $0.isDefault && $0.gateway != nil && slice.isUsable(family: $0.family) }
    }

    /// The routes a path look-up may find, each usable when it is not unicast or its link is up
    /// with carrier and a usable address of its family.
    static func lookupRoutes(_ snapshot: IndexedSnapshot) -> [PolicyRouting.PrefixedRoute] {
        var routes: [PolicyRouting.PrefixedRoute] = []
        for slice in snapshot.slices.values {
            for var route in slice.lookupRoutes {
                route.usable = route.route.type != .unicast || slice.isUsable(family: route.route.family)
                routes.append(route)
            }
        }
        return routes
    }

    /// The kernel's decision for an app's packet to `destination` (one of
    /// `InternetPath.candidates`) with `mark`, as the classifier takes it from `snapshot`.
    public static func decide(_ snapshot: NetworkSnapshot, family: AddressFamily, destination: String,
                              mark: UInt32 = 0) -> PolicyRouting.Decision? {
        let indexed = IndexedSnapshot(snapshot)
        guard let query = RouteQuery(family: family, destination: destination, mark: mark) else { return nil }
        return PolicyRouting.decide(query, rules: indexed.rules(of: family), routes: lookupRoutes(indexed),
                                    interfaceGroup: { indexed.link($0)?.group ?? 0 })
    }

    /// Where a tunnel's own packets leave, for a tunnel that carries `path`: the route that
    /// packets with the marks the rules test take (wg-quick marks its packets and routes the
    /// marked ones around its table), else the route the look-up finds with every tunnel's routes
    /// left out (OpenVPN's halves over the original default; a table of the tunnel's own).
    static func underlay(beneath path: InternetPath, routes: [PolicyRouting.PrefixedRoute], rules: [RoutingRule],
                         facts: Facts, interfaceGroup: (Int) -> UInt32) -> RouteState? {
        var marks: [UInt32] = []
        for rule in rules where rule.fwmark != 0 && !marks.contains(rule.fwmark) { marks.append(rule.fwmark) }
        for mark in marks {
            let query = RouteQuery(family: path.family, destination: path.bits, mark: mark)
            let decision = PolicyRouting.decide(query, rules: rules, routes: routes, interfaceGroup: interfaceGroup)
            if let hop = decision.routes.first, facts.kind(of: hop.oif) != .vpn { return hop }
        }
        let query = RouteQuery(family: path.family, destination: path.bits)
        let decision = PolicyRouting.decide(query, rules: rules, routes: routes,
                                            usable: { $0.usable && ($0.route.type != .unicast || facts.kind(of: $0.route.oif) != .vpn) },
                                            interfaceGroup: interfaceGroup)
        return decision.routes.first
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
struct Facts {
    /// The snapshot's slices and their order: what the facts are read from (not a copy of the
    /// whole snapshot, every collection of which a copy would retain).
    let slices: [Int: LinkSlice]
    let linkIndexes: [Int]
    let modemsByInterface: [String: ModemState]
    let wifiByInterface: [String: WiFiDevice]

    init(_ snapshot: IndexedSnapshot) {
        slices = snapshot.slices
        linkIndexes = snapshot.linkIndexes
        var modems: [String: ModemState] = [:]
        for modem in snapshot.modems { for name in modem.interfaces { modems[name] = modem } }
        modemsByInterface = modems
        var wifi: [String: WiFiDevice] = [:]
        for device in snapshot.wifi { wifi[device.interface] = device }
        wifiByInterface = wifi
    }

    /// The Wi-Fi device of that name an owner reports, if any.
    func wifi(for name: String) -> WiFiDevice? {
        wifiByInterface.isEmpty ? nil : wifiByInterface[name]
    }

    /// The kind a link of `kind` has given what ModemManager and the Wi-Fi owners say: a modem's
    /// interface is `wwan`, one a Wi-Fi owner manages `wifi`, whatever sysfs says.
    func kind(_ kind: InterfaceKind, name: String) -> InterfaceKind {
        if modem(for: name) != nil { return .wwan }
        if wifi(for: name)?.isManagedAsWiFi == true { return .wifi }
        return kind
    }

    func modem(for name: String) -> ModemState? {
        modemsByInterface.isEmpty ? nil : modemsByInterface[name]
    }

    /// An interface that a modem owns is `wwan` whatever sysfs says; a CLAT is `virtual`.
    func kind(of index: Int) -> InterfaceKind? {
        // The link's fields read in place: a copy of it would retain its every string.
        guard let slice = slices[index], let kind = slice.link?.kind else { return nil }
        if kind == .vpn && isCLAT(index) { return .virtual }
        guard !modemsByInterface.isEmpty || !wifiByInterface.isEmpty, let name = slice.link?.name else { return kind }
        return self.kind(kind, name: name)
    }

    /// A CLAT (464XLAT, as clatd and Android make): a tun holding an IPv4 address in
    /// 192.0.0.0/29, the block set aside for it. It carries the IPv4 path over the IPv6 uplink
    /// beneath: part of the transport, never a VPN.
    func isCLAT(_ index: Int) -> Bool {
        guard let slice = slices[index], slice.link?.kind == .vpn else { return false }
        return slice.addresses.contains { address in
            guard address.family == .ipv4, let bits = AddressBits(address.address, family: .ipv4) else { return false }
            return bits.hasPrefix(Self.clatBlock, length: 29)
        }
    }

    private static let clatBlock = AddressBits(bytes: [192, 0, 0, 0])

    /// A non-loopback link that is up with carrier but has no usable address or default route yet.
    var hasLinkAwaitingConfiguration: Bool {
        linkIndexes.contains { index in
            guard let link = slices[index]?.link else { return false }
            return link.kind != .loopback && link.up && link.carrier
        }
    }

    func interface(for slice: LinkSlice) -> Interface? {
        guard var interface = slice.interface else { return nil }
        interface.kind = kind(interface.kind, name: interface.name)
        if interface.kind == .vpn && isCLAT(slice.index) { interface.kind = .virtual }
        if interface.kind == .wifi, let station = wifi(for: interface.name)?.station { interface.wifi = WiFi(station) }
        return interface
    }
}
