import Testing
@testable import ReachabilityCore

private func link(_ index: Int, _ name: String, up: Bool = true, carrier: Bool = true) -> LinkFacts {
    LinkFacts(index: index, name: name, rtnlKind: "veth", up: up, carrier: carrier, operstate: up && carrier ? "up" : "down")
}
private let v4Default = RouteState(family: .ipv4, gateway: "10.0.0.1", oif: 2, metric: 100)
private let v6Default = RouteState(family: .ipv6, gateway: "fe80::1", oif: 2, metric: 1024)
private let address = AddressState(ifindex: 2, family: .ipv4, address: "10.0.0.2", prefixLength: 24)

/// The kernel's netlink pitfalls (silent route removals, per-link IPv6 routes, …) as the state
/// table handles them.
@Suite struct KernelStateTableTests {
    @Test func linkDownDropsIPv4RoutesOnly() {
        var table = KernelStateTable([.link(link(2, "eth0")), .addressAdded(address),
                                      .routeAdded(v4Default, replace: false), .routeAdded(v6Default, replace: false)])
        table.apply(.link(link(2, "eth0", up: false, carrier: false)))
        #expect(table.allRoutes == [v6Default])
        #expect(table.allAddresses == [address])
    }

    @Test func carrierLossKeepsRoutes() {
        var table = KernelStateTable([.link(link(2, "eth0")), .routeAdded(v4Default, replace: false)])
        table.apply(.link(link(2, "eth0", carrier: false)))
        #expect(table.allRoutes == [v4Default])
    }

    @Test func linkRemovalDropsEverythingOfTheLink() {
        let other = RouteState(family: .ipv4, gateway: "10.1.0.1", oif: 3, metric: 200)
        var table = KernelStateTable([.link(link(2, "eth0")), .link(link(3, "eth1")), .addressAdded(address),
                                      .routeAdded(v4Default, replace: false), .routeAdded(v6Default, replace: false),
                                      .routeAdded(other, replace: false)])
        table.apply(.linkRemoved(index: 2))
        #expect(table.links.keys.sorted() == [3])
        #expect(table.allAddresses.isEmpty)
        #expect(table.allRoutes == [other])
    }

    @Test func localTableAndLinkLocalRoutesAreIgnored() {
        let local = RouteState(family: .ipv4, table: 255, destination: "10.0.0.2", prefixLength: 32, oif: 2, type: .local)
        let linkLocal = RouteState(family: .ipv6, destination: "fe80::", prefixLength: 64, oif: 2, metric: 256)
        let table = KernelStateTable([.routeAdded(local, replace: false), .routeAdded(linkLocal, replace: false)])
        #expect(table.allRoutes.isEmpty)
    }

    @Test func ipv6RoutesOnDifferentLinksStayApart() {
        let a = RouteState(family: .ipv6, gateway: "fe80::1", oif: 2, metric: 1024)
        let b = RouteState(family: .ipv6, gateway: "fe80::1", oif: 3, metric: 1024)
        var table = KernelStateTable([.routeAdded(a, replace: false), .routeAdded(b, replace: false)])
        #expect(Set(table.allRoutes) == [a, b])
        table.apply(.routeRemoved(a))
        #expect(table.allRoutes == [b])
    }

    @Test func replaceSwapsTheNextHop() {
        let moved = RouteState(family: .ipv4, gateway: "10.1.0.1", oif: 3, metric: 100)
        var table = KernelStateTable([.routeAdded(v4Default, replace: false)])
        table.apply(.routeAdded(moved, replace: true))
        #expect(table.allRoutes == [moved])
    }

    @Test func addressUpdateReplacesFlags() {
        var tentative = AddressState(ifindex: 2, family: .ipv6, address: "2001:db8::2", prefixLength: 64, tentative: true)
        var table = KernelStateTable([.addressAdded(tentative)])
        tentative.tentative = false
        table.apply(.addressAdded(tentative))
        #expect(table.allAddresses == [tentative])
        table.apply(.addressRemoved(tentative))
        #expect(table.allAddresses.isEmpty)
    }

    @Test func snapshotAppliesKindsMeteredAndIgnored() {
        let table = KernelStateTable([.link(link(2, "eth0")), .link(link(3, "docker0")), .addressAdded(address),
                                      .routeAdded(v4Default, replace: false),
                                      .routeAdded(RouteState(family: .ipv4, destination: "172.17.0.0", prefixLength: 16, oif: 3), replace: false)])
        let snapshot = table.snapshot(kinds: [2: .wifi], metered: [2], ignored: [3])
        #expect(snapshot.links.keys.sorted() == [2])
        #expect(snapshot.links[2]?.kind == .wifi)
        #expect(snapshot.links[2]?.metered == true)
        #expect(snapshot.routes == [v4Default])
        let status = Classifier.classify(snapshot, since: .init(timeIntervalSince1970: 0))
        #expect(status.status == .wifi)
        #expect(status.expensive)
    }
}
