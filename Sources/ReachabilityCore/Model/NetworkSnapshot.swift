/// An IP address family.
public enum AddressFamily: String, Codable, Sendable, CaseIterable, Hashable {
    case ipv4, ipv6
}

/// A link as the netlink source sees it, its kind already resolved (rtnl kind, sysfs, overrides).
public struct LinkState: Equatable, Hashable, Sendable {
    public var index: Int
    public var name: String
    public var kind: InterfaceKind
    /// IFF_UP.
    public var up: Bool
    /// IFF_LOWER_UP.
    public var carrier: Bool
    public var operstate: String
    public var metered: Bool
    /// In low data mode (`[Interfaces] Constrained=`).
    public var constrained: Bool = false
    /// The interface group (IFLA_GROUP), for `suppress_ifgroup` rules.
    public var group: UInt32

    public init(index: Int, name: String, kind: InterfaceKind, up: Bool, carrier: Bool,
                operstate: String, metered: Bool = false, group: UInt32 = 0) {
        self.index = index; self.name = name; self.kind = kind; self.up = up
        self.carrier = carrier; self.operstate = operstate; self.metered = metered; self.group = group
    }
}

/// The scope of an address (RT_SCOPE_*), reduced to what classification needs.
public enum AddressScope: String, Sendable, Hashable {
    case global, site, link, host
}

/// One address on a link.
public struct AddressState: Equatable, Hashable, Sendable {
    public var ifindex: Int
    public var family: AddressFamily
    /// The address without prefix length (`192.168.1.20`, `2001:db8::1`).
    public var address: String
    public var prefixLength: Int
    public var scope: AddressScope
    /// IFA_F_TENTATIVE (IPv6 duplicate address detection not finished) or IFA_F_DADFAILED.
    public var tentative: Bool

    public init(ifindex: Int, family: AddressFamily, address: String, prefixLength: Int,
                scope: AddressScope = .global, tentative: Bool = false) {
        self.ifindex = ifindex; self.family = family; self.address = address
        self.prefixLength = prefixLength; self.scope = scope; self.tentative = tentative
    }

    /// `address/prefixLength`.
    public var cidr: String { "\(address)/\(prefixLength)" }

    /// Can traffic to the internet use this address as its source?
    public var isUsable: Bool {
        !tentative && (scope == .global || scope == .site)
    }
}

/// The route types that matter (RTN_*).
public enum RouteType: String, Sendable, Hashable, CaseIterable {
    case unicast, local, broadcast, anycast, multicast, blackhole, unreachable, prohibit, throwRoute = "throw", other
}

/// One route of any table but the local one (255).
public struct RouteState: Equatable, Hashable, Sendable {
    public static let mainTable: UInt32 = 254
    public static let localTable: UInt32 = 255

    public var family: AddressFamily
    public var table: UInt32
    /// The destination without prefix length; nil for a default route.
    public var destination: String?
    public var prefixLength: Int
    public var gateway: String?
    /// Output interface index (0 when none).
    public var oif: Int
    public var metric: UInt32
    public var type: RouteType
    /// The kernel learned the route from a router advertisement (`proto ra`, RTPROT_RA): anyone
    /// on the link can add and remove such routes at any rate, so the monitor merges their
    /// changes as it merges the advertisements' options.
    public var fromRouterAdvertisement: Bool

    public init(family: AddressFamily, table: UInt32 = RouteState.mainTable, destination: String? = nil,
                prefixLength: Int = 0, gateway: String? = nil, oif: Int, metric: UInt32 = 0,
                type: RouteType = .unicast, fromRouterAdvertisement: Bool = false) {
        self.family = family; self.table = table; self.destination = destination
        self.prefixLength = prefixLength; self.gateway = gateway; self.oif = oif
        self.metric = metric; self.type = type; self.fromRouterAdvertisement = fromRouterAdvertisement
    }

    /// A default route: prefix length 0 (`nl_addr2str` prints its destination as "none").
    public var isDefault: Bool { prefixLength == 0 }
}

/// A modem as ModemManager describes it.
public struct ModemState: Equatable, Hashable, Sendable {
    /// D-Bus object path, `/org/freedesktop/ModemManager1/Modem/N`.
    public var path: String
    /// Network interfaces that belong to the modem (net ports and bearer interfaces).
    public var interfaces: [String]
    /// `MMModemAccessTechnology` bit mask.
    public var accessTechnologies: UInt32
    public var signalQuality: Int?
    public var roaming: Bool?
    /// The radio's figures from `Modem.Signal`, nil when the modem reports none.
    public var signal: RadioSignal?

    public init(path: String, interfaces: [String], accessTechnologies: UInt32,
                signalQuality: Int? = nil, roaming: Bool? = nil, signal: RadioSignal? = nil) {
        self.path = path; self.interfaces = interfaces; self.accessTechnologies = accessTechnologies
        self.signalQuality = signalQuality; self.roaming = roaming; self.signal = signal
    }
}

/// Everything the classifier looks at: the monitor's state table at one instant.
public struct NetworkSnapshot: Equatable, Sendable {
    public var links: [Int: LinkState]
    public var addresses: Set<AddressState>
    public var routes: Set<RouteState>
    public var modems: [ModemState]
    /// The policy routing rules of both families, each in the kernel's order; empty: the
    /// kernel's defaults (local, main, default).
    public var rules: [RoutingRule]
    /// The last connectivity check, nil when none ran or checks are disabled.
    public var probe: Probe?
    /// The path `probe` was checked over (nil: the checker saw the machine not reachable, or
    /// published nothing yet). A verdict counts only for the path it is about.
    public var probePath: ProbePath?
    /// What each link's routers announce (DNS, search domains, NAT64, captive-portal API), by index.
    public var announcements: [Int: RouterAnnouncements]
    /// The standby check's last verdict on each uplink other than the primary, by interface
    /// index: `Interface.connectivity`, never `Status.connectivity`.
    public var standbyVerdicts: [Int: Probe] = [:]
    /// False when the connectivity check is off (`Status.connectivityCheck`).
    public var connectivityCheck = true
    /// Each uplink's measured quality, by interface index (`Interface.linkQuality`).
    public var linkQualities: [Int: LinkQuality] = [:]
    /// False with `[LinkQuality] Enabled=no`: no uplink has a quality, not even a guess.
    public var measuresQuality = false
    /// The data stalls suspected, by uplink index (`Interface.stall`).
    public var dataStalls: [Int: DataStall] = [:]
    /// The Wi-Fi devices their owners report, by interface name (`Interface.wifi`; a device
    /// an owner manages is `wifi` whatever sysfs says).
    public var wifi: [WiFiDevice] = []

    public init(links: [Int: LinkState] = [:], addresses: Set<AddressState> = [], routes: Set<RouteState> = [],
                modems: [ModemState] = [], probe: Probe? = nil, probePath: ProbePath? = nil, rules: [RoutingRule] = [],
                announcements: [Int: RouterAnnouncements] = [:]) {
        self.links = links; self.addresses = addresses; self.routes = routes
        self.modems = modems; self.probe = probe; self.probePath = probePath; self.rules = rules
        self.announcements = announcements
    }

    /// The checker's latest publication.
    public var verdict: ConnectivityRule.Verdict { ConnectivityRule.Verdict(probe: probe, path: probePath) }

    /// Records a publication of the connectivity checker.
    public mutating func setVerdict(_ probe: Probe?, path: ProbePath?) {
        self.probe = probe
        self.probePath = path
    }
}
