import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func link(_ index: Int, _ name: String, _ kind: InterfaceKind) -> LinkState {
    LinkState(index: index, name: name, kind: kind, up: true, carrier: true, operstate: "up")
}
private let lo = link(1, "lo", .loopback)
private let wlan0 = link(2, "wlan0", .wifi)
private let v6Address = AddressState(ifindex: 2, family: .ipv6, address: "2001:db8::2", prefixLength: 64)
private let v6Default = RouteState(family: .ipv6, gateway: "fe80::1", oif: 2, metric: 600)

private func pref64(_ prefix: String) -> [Int: RouterAnnouncements] {
    var announced = RouterAnnouncements()
    announced.apply(RouterOption(ifindex: 2, content: .nat64Prefix(prefix), lifetime: 1800, receivedAt: 0, router: "fe80::1"))
    return [2: announced]
}

/// IPv6-only networks with NAT64: online, `nat64` in the flags; a CLAT is transport, not a VPN.
@Suite struct NAT64ClassificationTests {
    @Test func ipv6OnlyWithPREF64IsOnlineWithNAT64() {
        let snapshot = NetworkSnapshot(links: [1: lo, 2: wlan0], addresses: [v6Address], routes: [v6Default],
                                       announcements: pref64("64:ff9b::/96"))
        let status = Classifier.classify(snapshot, since: t0)
        #expect(status.reachable && status.status == .wifi)
        #expect(!status.ipv4 && status.ipv6)
        #expect(status.flags.contains(.nat64))
        #expect(status.primary?.nat64Prefix == "64:ff9b::/96")
        // Only IPv6 has a path: only IPv6 is checked, IPv4's verdict is none.
        let path = ProbePath(status)
        #expect(path?.ipv4 == false && path?.ipv6 == true)
    }

    @Test func ipv6OnlyWithoutNAT64HasNoFlag() {
        let snapshot = NetworkSnapshot(links: [1: lo, 2: wlan0], addresses: [v6Address], routes: [v6Default])
        let status = Classifier.classify(snapshot, since: t0)
        #expect(status.reachable)
        #expect(!status.flags.contains(.nat64))
    }

    @Test func clatCarryingIPv4IsTransportNotVPN() throws {
        let clat = link(5, "clat", .vpn)
        let snapshot = NetworkSnapshot(
            links: [1: lo, 2: wlan0, 5: clat],
            addresses: [v6Address, AddressState(ifindex: 5, family: .ipv4, address: "192.0.0.4", prefixLength: 29)],
            routes: [v6Default, RouteState(family: .ipv4, oif: 5, metric: 50)])
        let status = Classifier.classify(snapshot, since: t0)
        #expect(status.status == .wifi)
        #expect(status.primary?.name == "wlan0")
        #expect(status.vpn == nil)
        #expect(!status.flags.contains(.transientConnection))
        #expect(status.flags.contains(.nat64))
        #expect(status.ipv4 && status.ipv6)
        #expect(status.interfaces.first { $0.name == "clat" }?.kind == .virtual)
        // The IPv4 check leaves by the CLAT, the IPv6 one by the uplink.
        let path = try #require(ProbePath(status))
        #expect(path.interface == "wlan0")
        #expect(path.way(for: .ipv4).index == 5)
        #expect(path.way(for: .ipv6).index == 2)
    }

    @Test func tunOutsideTheCLATBlockIsStillAVPN() {
        let tun = link(5, "tun0", .vpn)
        let snapshot = NetworkSnapshot(
            links: [1: lo, 2: wlan0, 5: tun],
            addresses: [v6Address, AddressState(ifindex: 5, family: .ipv4, address: "192.0.0.9", prefixLength: 29)],
            routes: [v6Default, RouteState(family: .ipv4, oif: 5, metric: 50)])
        let status = Classifier.classify(snapshot, since: t0)
        #expect(status.vpn?.name == "tun0")
        #expect(!status.flags.contains(.nat64))
    }
}
