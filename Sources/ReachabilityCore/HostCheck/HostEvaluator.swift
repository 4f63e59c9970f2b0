/// What the kernel answered to a route look-up for one address (`ip route get ADDRESS`).
public struct RouteLookupResult: Equatable, Hashable, Sendable {
    /// The kernel's view of the output link, read with the route: used when the monitor's
    /// status does not list the interface (ignored interfaces, a status from before it appeared).
    public struct Link: Equatable, Hashable, Sendable {
        public var name: String
        /// IFF_UP.
        public var up: Bool
        /// IFF_LOWER_UP.
        public var carrier: Bool
        public init(name: String, up: Bool, carrier: Bool) { self.name = name; self.up = up; self.carrier = carrier }
    }

    public var address: String
    public var family: AddressFamily
    /// The route type (rtm_type). A refused look-up (ENETUNREACH, EHOSTUNREACH, EACCES, EINVAL)
    /// is reported as the type the kernel's error stands for (`unreachable`, `prohibit`, `blackhole`).
    public var type: RouteType
    /// RTA_OIF, nil when the look-up was refused.
    public var outputInterfaceIndex: Int?
    public var link: Link?
    /// RTA_GATEWAY or RTA_VIA.
    public var gateway: String?
    /// RTA_PREFSRC.
    public var preferredSource: String?
    /// The kernel's error text when it refused the look-up (`Network is unreachable`).
    public var error: String?

    public init(address: String, family: AddressFamily, type: RouteType, outputInterfaceIndex: Int? = nil,
                link: Link? = nil, gateway: String? = nil, preferredSource: String? = nil, error: String? = nil) {
        self.address = address; self.family = family; self.type = type
        self.outputInterfaceIndex = outputInterfaceIndex; self.link = link; self.gateway = gateway
        self.preferredSource = preferredSource; self.error = error
    }

}

/// Pure evaluation of a host check: route look-ups and the monitor's status in, `HostCheck` out.
public enum HostEvaluator {
    /// How one address's route is judged.
    public struct Verdict: Equatable, Sendable {
        public var usable: Bool
        public var status: NetworkStatus
        public var flags: [ReachabilityFlag]
        public var route: Route
    }

    /// Builds the answer for `host`. The daemon never connects anywhere for a caller: `tcp` is
    /// filled in by the client libraries (`HostCheck.withTCP`), from the caller's own process.
    ///
    /// - Parameters:
    ///   - lookups: one per address, in the resolver's order.
    ///   - status: the monitor's current status (interfaces, kinds, vpn, cellular).
    public static func evaluate(host: String, lookups: [RouteLookupResult], status: Status) -> HostCheck {
        let verdicts = lookups.map { verdict(for: $0, status: status) }
        // The address the answer describes: the first usable route, else the first address.
        let chosenIndex: Int? = verdicts.firstIndex { $0.usable } ?? (verdicts.isEmpty ? nil : 0)
        var ordered = verdicts
        if let chosenIndex, chosenIndex != 0 { ordered.insert(ordered.remove(at: chosenIndex), at: 0) }

        let chosen = ordered.first
        let routeUsable = chosen?.usable ?? false
        let reachable = routeUsable
        var flags: [ReachabilityFlag] = []
        if reachable { flags.append(.reachable) }
        if let chosen {
            for flag in chosen.flags where flag != .reachable && !flags.contains(flag) { flags.append(flag) }
        }
        // A link that could carry the traffic once configured: SCNetworkReachability's
        // connectionRequired, reported when no address has a usable route.
        if !routeUsable && verdicts.contains(where: { $0.flags.contains(.connectionRequired) })
            && !flags.contains(.connectionRequired) {
            flags.append(.connectionRequired)
        }
        let statusName = routeUsable ? (chosen?.status ?? .notReachable) : .notReachable
        return HostCheck(host: host, addresses: ordered.map(\.route.address), reachable: reachable,
                         status: statusName.rawValue, flags: orderedFlags(flags).map(\.rawValue),
                         routes: ordered.map(\.route), tcp: nil)
    }

    /// Judges the route to one address.
    public static func verdict(for lookup: RouteLookupResult, status: Status) -> Verdict {
        let statusInterface = lookup.outputInterfaceIndex.flatMap { index in status.interfaces.first { $0.index == index } }
        let name = statusInterface?.name ?? lookup.link?.name
        var route = Route(address: lookup.address, interface: nil, kind: nil, gateway: lookup.gateway,
                          source: lookup.preferredSource, type: lookup.type.rawValue)

        switch lookup.type {
        case .local:
            // An address of this machine: the answer names the interface that owns it (lo says nothing).
            let owner = status.interfaces.first { iface in iface.addresses.contains { $0.split(separator: "/").first.map(String.init) == lookup.address } }
            route.interface = name
            route.kind = (statusInterface ?? owner)?.kind.rawValue
            let ownerStatus = owner.map { networkStatus(through: $0, status: status) } ?? .unknown
            return Verdict(usable: true, status: ownerStatus == .notReachable ? .unknown : ownerStatus,
                           flags: [.reachable, .isLocalAddress, .isDirect], route: route)
        case .unicast, .broadcast, .anycast, .multicast:
            route.interface = name
            route.kind = statusInterface?.kind.rawValue
            let up = statusInterface?.up ?? lookup.link?.up ?? true
            let carrier = statusInterface?.carrier ?? lookup.link?.carrier ?? true
            guard up && carrier else {
                return Verdict(usable: false, status: .notReachable, flags: [], route: route)
            }
            if let statusInterface, !hasAddress(statusInterface, family: lookup.family) {
                // Carrier but nothing configured yet (DHCP/RA pending): a connection is required.
                return Verdict(usable: false, status: .notReachable, flags: [.connectionRequired], route: route)
            }
            let pathStatus = statusInterface.map { networkStatus(through: $0, status: status) } ?? .unknown
            var flags: [ReachabilityFlag] = [.reachable]
            if lookup.gateway == nil { flags.append(.isDirect) }
            if pathStatus.isWWAN { flags.append(.isWWAN) }
            if statusInterface?.kind == .vpn { flags.append(.transientConnection) }
            return Verdict(usable: true, status: pathStatus == .notReachable ? .unknown : pathStatus, flags: flags, route: route)
        case .blackhole, .unreachable, .prohibit, .throwRoute, .other:
            // Kernel routes of these types point at lo; naming it would mislead.
            route.gateway = nil
            return Verdict(usable: false, status: .notReachable, flags: [], route: route)
        }
    }

    /// The `NetworkStatus` of traffic leaving through `interface`: its kind, with the cellular
    /// generation when it is the primary's modem, and the transport beneath when it is the VPN.
    public static func networkStatus(through interface: Interface, status: Status) -> NetworkStatus {
        switch interface.kind {
        case .ethernet, .bridge: return .ethernet
        case .wifi: return .wifi
        case .wwan:
            if let cellular = status.cellular, cellular.interface == interface.name,
               let generation = cellular.generation.flatMap(ModemAccessTechnology.Generation.init(rawValue:)) {
                return generation.networkStatus
            }
            return .wwan
        case .vpn:
            // Like the machine's status, a host reached through the VPN names the transport beneath.
            if status.vpn?.name == interface.name, status.status.isReachable { return status.status }
            return .unknown
        case .loopback, .virtual, .other:
            return .unknown
        }
    }

    private static func hasAddress(_ interface: Interface, family: AddressFamily) -> Bool {
        interface.addresses.contains { ($0.contains(":") ? AddressFamily.ipv6 : .ipv4) == family }
    }

    /// Flags in the order of `ReachabilityFlag.allCases`, so answers compare and print stably.
    private static func orderedFlags(_ flags: [ReachabilityFlag]) -> [ReachabilityFlag] {
        ReachabilityFlag.allCases.filter(flags.contains)
    }
}
