/// An uplink other than the one apps' traffic takes: a link with a usable default route of its
/// own, which the standby check checks bound to it, so that a failover's destination is known
/// to work before it is needed.
public struct StandbyUplink: Equatable, Hashable, Sendable {
    /// The interface, its addresses and the gateways of its default routes.
    public var path: ProbePath
    /// Metered, or cellular: checked only with `CheckStandby=yes`.
    public var expensive: Bool

    public init(path: ProbePath, expensive: Bool) {
        self.path = path
        self.expensive = expensive
    }

    /// The standby uplinks of `snapshot` as `status` (classified from it) shows it: every listed
    /// interface but the primary and the tunnel that is up with carrier and has a main-table
    /// default route through a gateway whose family it has a usable address of. In index order.
    public static func all(in snapshot: IndexedSnapshot, status: Status) -> [StandbyUplink] {
        all(in: snapshot.slices, status: status)
    }

    /// The same from the snapshot's slices by index alone.
    public static func all(in slices: [Int: LinkSlice], status: Status) -> [StandbyUplink] {
        let excluded = [status.primary?.index, status.vpn?.index].compactMap { $0 }
        var uplinks: [StandbyUplink] = []
        for interface in status.interfaces where !excluded.contains(interface.index) {
            switch interface.kind {
            case .loopback, .vpn: continue
            case .ethernet, .wifi, .wwan, .bridge, .virtual, .other: break
            }
            guard interface.up, interface.carrier, let slice = slices[interface.index] else { continue }
            var gateways: [String] = []
            for route in slice.gatewayRoutes where route.isDefault && slice.isUsable(family: route.family) {
                if let gateway = route.gateway, !gateways.contains(gateway) { gateways.append(gateway) }
            }
            guard !gateways.isEmpty else { continue }
            let path = ProbePath(interface: interface.name, index: interface.index, addresses: interface.addresses.sorted(),
                                 gateways: gateways.sorted(), captivePortalApi: interface.captivePortalApi)
            uplinks.append(StandbyUplink(path: path, expensive: interface.metered || interface.kind == .wwan))
        }
        return uplinks
    }
}
