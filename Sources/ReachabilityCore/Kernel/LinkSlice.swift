/// Everything a snapshot holds about one interface index: the link (nil when there is none, or
/// it is ignored), the addresses on it and the routes out of it — plus what classification
/// derives from them alone, worked out once when the slice is made.
///
/// A netlink message changes one index (rarely a few), so the monitor remakes the slices of the
/// indexes a wake-up touched and keeps the others: classification then walks links and their
/// default-route candidates instead of regrouping, filtering and sorting every address and route.
///
/// Immutable, and a class: a slice passes from the table through the monitor to the tracker and
/// its snapshot, and each of those hands it on with one reference count instead of copying two
/// sets, two arrays and the strings of a link and an interface.
public final class LinkSlice: Equatable, Sendable {
    public let index: Int
    public let link: LinkState?
    public let addresses: Set<AddressState>
    public let routes: Set<RouteState>
    /// What the link's routers announce; nil when nothing (or the slice has no link).
    public let announcements: RouterAnnouncements?

    /// The link, not loopback, up with carrier, with a usable IPv4 / IPv6 address.
    let usableIPv4: Bool
    let usableIPv6: Bool
    /// The routes a path look-up can find (`InternetPath.mayDecide`: of any table and type,
    /// covering an address the look-up is made for). Their `usable` is left false: it follows
    /// the link, which the classifier judges.
    let lookupRoutes: [PolicyRouting.PrefixedRoute]
    /// Main-table unicast routes with a gateway: where a tunnel's own packets may leave when
    /// nothing else tells.
    let gatewayRoutes: [RouteState]
    /// The link as a status lists it, its kind as the link says (a modem may override it).
    let interface: Interface?
    /// The addresses as a status lists them: not tentative, IPv4 first, sorted, in CIDR form.
    let shownAddresses: [String]
    /// The link has a usable address of that family (whatever the link's state).
    let hasUsableIPv4: Bool
    let hasUsableIPv6: Bool

    public convenience init(index: Int, link: LinkState?, addresses: Set<AddressState> = [], routes: Set<RouteState> = [],
                            announcements: RouterAnnouncements? = nil) {
        var usable4 = false, usable6 = false
        for address in addresses where address.isUsable {
            switch address.family {
            case .ipv4: usable4 = true
            case .ipv6: usable6 = true
            }
        }
        let shown = addresses
            .filter { !$0.tentative }
            .sorted { ($0.family == .ipv4 ? 0 : 1, $0.address, $0.prefixLength) < ($1.family == .ipv4 ? 0 : 1, $1.address, $1.prefixLength) }
            .map(\.cidr)
        let lookup = routes.compactMap { PolicyRouting.PrefixedRoute($0, usable: false) }.filter(InternetPath.mayDecide)
        let gateways = routes.filter { $0.table == RouteState.mainTable && $0.type == .unicast && $0.gateway != nil }.sorted(by: Classifier.routeOrder)
        self.init(index: index, link: link, addresses: addresses, routes: routes, announcements: announcements?.isEmpty == false ? announcements : nil,
                  lookupRoutes: lookup, gatewayRoutes: gateways, shownAddresses: shown, hasUsableIPv4: usable4, hasUsableIPv6: usable6)
    }

    private init(index: Int, link: LinkState?, addresses: Set<AddressState>, routes: Set<RouteState>,
                 announcements: RouterAnnouncements?, lookupRoutes: [PolicyRouting.PrefixedRoute], gatewayRoutes: [RouteState],
                 shownAddresses: [String], hasUsableIPv4: Bool, hasUsableIPv6: Bool) {
        self.index = index
        self.link = link
        self.addresses = addresses
        self.routes = routes
        self.announcements = announcements
        self.lookupRoutes = lookupRoutes
        self.gatewayRoutes = gatewayRoutes
        self.shownAddresses = shownAddresses
        self.hasUsableIPv4 = hasUsableIPv4
        self.hasUsableIPv6 = hasUsableIPv6
        let linkUsable = link.map { $0.kind != .loopback && $0.up && $0.carrier } ?? false
        usableIPv4 = linkUsable && hasUsableIPv4
        usableIPv6 = linkUsable && hasUsableIPv6
        interface = link.map { link in
            Interface(name: link.name, index: link.index, kind: link.kind, up: link.up, carrier: link.carrier,
                      operstate: link.operstate, addresses: shownAddresses, metered: link.metered,
                      dns: announcements?.dnsServers ?? [], searchDomains: announcements?.searchDomains ?? [],
                      nat64Prefix: announcements?.nat64Prefix, captivePortalApi: announcements?.captivePortal)
        }
    }

    /// The same addresses and routes under `link`: what a message about the link alone (up,
    /// carrier, operstate, name) changes. Nothing about the addresses and routes is worked out again.
    public func replacingLink(with link: LinkState?) -> LinkSlice {
        LinkSlice(index: index, link: link, addresses: addresses, routes: routes,
                  announcements: link == nil ? nil : announcements, lookupRoutes: lookupRoutes,
                  gatewayRoutes: gatewayRoutes, shownAddresses: shownAddresses, hasUsableIPv4: hasUsableIPv4, hasUsableIPv6: hasUsableIPv6)
    }

    /// Nothing at this index.
    public var isEmpty: Bool { link == nil && addresses.isEmpty && routes.isEmpty }

    func isUsable(family: AddressFamily) -> Bool {
        switch family {
        case .ipv4: return usableIPv4
        case .ipv6: return usableIPv6
        }
    }

    public static func == (a: LinkSlice, b: LinkSlice) -> Bool {
        a === b || a.index == b.index && a.link == b.link && a.addresses == b.addresses && a.routes == b.routes
            && a.announcements == b.announcements
    }
}
