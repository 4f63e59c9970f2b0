/// The part of a `Status` a connectivity verdict depends on: the interface apps' packets leave
/// by (the tunnel when one carries the path, else the primary), its addresses and the gateways.
/// When the interface or its addresses change, the last verdict is about another network and
/// the check runs again at once; the routers and the captive-portal API URI alone (which anyone
/// on the link can change at any rate) are checked again within the network's floor.
public struct ProbePath: Equatable, Hashable, Sendable {
    /// The interface the check binds to (SO_BINDTODEVICE).
    public var interface: String
    public var index: Int
    /// Addresses of the interface in CIDR form; their address parts are the fallback source
    /// addresses when binding to the device is not permitted.
    public var addresses: [String]
    public var gateways: [String]
    /// The captive-portal API URI the interface's routers announce (RFC 8910): the check asks it
    /// first. A new one is another network's word, so it checks again at once.
    public var captivePortalApi: String?
    /// Where one family's packets leave when that is not `interface`: a CLAT carrying IPv4 over
    /// an IPv6 uplink, a tunnel that carries one family while the other goes direct.
    public struct Way: Equatable, Hashable, Sendable {
        public var interface: String
        public var index: Int
        /// Its addresses in CIDR form.
        public var addresses: [String]

        public init(interface: String, index: Int, addresses: [String]) {
            self.interface = interface; self.index = index; self.addresses = addresses
        }
    }

    /// IPv4's own way out, when it is not `interface` (`Status.routing`).
    public var ipv4Way: Way?
    /// IPv6's own way out, when it is not `interface`.
    public var ipv6Way: Way?
    /// Whether IPv4 has a path (`Status.ipv4`): only then is IPv4 checked.
    public var ipv4: Bool
    /// Whether IPv6 has a path (`Status.ipv6`): only then is IPv6 checked.
    public var ipv6: Bool

    public init(interface: String, index: Int, addresses: [String], gateways: [String], captivePortalApi: String? = nil,
                ipv4: Bool = true, ipv6: Bool = true) {
        self.interface = interface; self.index = index; self.addresses = addresses; self.gateways = gateways
        self.captivePortalApi = captivePortalApi; self.ipv4 = ipv4; self.ipv6 = ipv6
    }

    /// The path of `status`; nil when the machine is not reachable. Under a tunnel the check
    /// goes through the tunnel, as apps' packets do: the transport beneath alone is a path no app uses.
    public init?(_ status: Status) {
        guard status.reachable, let way = status.vpn ?? status.primary else { return nil }
        self.init(interface: way.name, index: way.index, addresses: way.addresses.sorted(),
                  gateways: status.gateways.sorted(), captivePortalApi: way.captivePortalApi,
                  ipv4: status.ipv4, ipv6: status.ipv6)
        ipv4Way = Self.way(of: .ipv4, in: status, besides: way.index)
        ipv6Way = Self.way(of: .ipv6, in: status, besides: way.index)
    }

    /// The interface `family`'s internet path leaves by, when it is another than `index`.
    private static func way(of family: AddressFamily, in status: Status, besides index: Int) -> Way? {
        guard let route = status.routing.first(where: { $0.family == family }), route.result == .route,
              let name = route.interface,
              let interface = status.interfaces.first(where: { $0.name == name }), interface.index != index else { return nil }
        return Way(interface: interface.name, index: interface.index, addresses: interface.addresses.sorted())
    }

    /// The way `family`'s check goes: its own, or the path's interface.
    public func way(for family: AddressFamily) -> Way {
        let own: Way?
        switch family {
        case .ipv4: own = ipv4Way
        case .ipv6: own = ipv6Way
        }
        return own ?? Way(interface: interface, index: index, addresses: addresses)
    }

    /// True when `other` is this path with other routers or another captive-portal API URI (or
    /// both): what the routers on the link change with every advertisement, at any rate. The
    /// check binds to the interface and its addresses, so its verdict holds for either, and a
    /// check under way for one of them is not restarted for the other.
    public func differsOnlyInAnnouncements(from other: ProbePath?) -> Bool {
        guard var other, other != self else { return false }
        other.gateways = gateways
        other.captivePortalApi = captivePortalApi
        return other == self
    }

    /// True when a verdict about `other` is one about this path: the same path, or one whose
    /// routers or captive-portal API URI alone differ (`differsOnlyInAnnouncements`).
    public func isSameNetwork(as other: ProbePath?) -> Bool {
        other == self || differsOnlyInAnnouncements(from: other)
    }

    /// The addresses without their prefix length (`192.168.1.20`).
    public var sourceAddresses: [String] {
        addresses.map { cidr in cidr.split(separator: "/", maxSplits: 1).first.map(String.init) ?? cidr }
    }
}
