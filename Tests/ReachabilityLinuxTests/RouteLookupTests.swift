import Foundation
import ReachabilityCore
import Testing
import TestSupport
@testable import ReachabilityLinux

/// A host namespace with two uplinks: eth0 (10.61.0.2/24, default via 10.61.0.1, IPv6
/// 2001:db8:61::2/64 with a default via ::1) and eth1 (10.62.0.2/24) carrying the more specific
/// 203.0.113.0/24 via 10.62.0.1; plus blackhole, unreachable and prohibit routes.
final class RouteFixture: @unchecked Sendable {
    let host: TestNamespace
    let uplink: TestNamespace
    let uplink2: TestNamespace
    let eth0: VethUplink
    let eth1: VethUplink

    init(subnet: Int) throws {
        host = try TestNamespace(tag: "h")
        uplink = try TestNamespace(tag: "u")
        uplink2 = try TestNamespace(tag: "v")
        eth0 = try VethUplink(host: host, uplink: uplink, inner: "eth0", outer: "up0", subnet: subnet)
        eth1 = try VethUplink(host: host, uplink: uplink2, inner: "eth1", outer: "up1", subnet: subnet + 1, defaultRoute: false)
        try host.ip("route add 203.0.113.0/24 via 10.\(subnet + 1).0.1 dev eth1")
        try host.ip("route add blackhole 198.51.100.0/24")
        try host.ip("route add unreachable 198.51.101.0/24")
        try host.ip("route add prohibit 198.51.102.0/24")
        try host.ip("-6 addr add 2001:db8:\(subnet)::2/64 dev eth0 nodad")
        try uplink.ip("-6 addr add 2001:db8:\(subnet)::1/64 dev up0 nodad")
        try host.ip("-6 route add default via 2001:db8:\(subnet)::1 dev eth0")
    }

    /// The index from the namespace's own sysfs: `ip link show` may put a warning about the
    /// peer's namespace before its line while other tests delete theirs.
    func index(of name: String) throws -> Int {
        let text = try host.exec("cat /sys/class/net/\(name)/ifindex")
        return try #require(Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), "no index in \(text)")
    }

    func destroy() { host.destroy(); uplink.destroy(); uplink2.destroy() }
}

extension SystemTests {
@Suite struct RouteLookupTests {
    @Test(.needsRoot()) func kernelAnswersEachKindOfRoute() throws {
        let f = try RouteFixture(subnet: 61)
        defer { f.destroy() }
        let eth0 = try f.index(of: "eth0"), eth1 = try f.index(of: "eth1")
        let lookup = try RouteLookup(networkNamespace: f.host.name)

        let viaGateway = try lookup.lookup("192.0.2.1")
        #expect(viaGateway == RouteLookupResult(address: "192.0.2.1", family: .ipv4, type: .unicast, outputInterfaceIndex: eth0,
                                                link: .init(name: "eth0", up: true, carrier: true),
                                                gateway: "10.61.0.1", preferredSource: "10.61.0.2"))

        let onLink = try lookup.lookup("10.61.0.1")
        #expect(onLink.type == .unicast && onLink.gateway == nil && onLink.outputInterfaceIndex == eth0)

        let local = try lookup.lookup("10.61.0.2")
        #expect(local.type == .local)
        #expect(local.link?.name == "lo")

        let moreSpecific = try lookup.lookup("203.0.113.9")
        #expect(moreSpecific.outputInterfaceIndex == eth1)
        #expect(moreSpecific.link?.name == "eth1")
        #expect(moreSpecific.gateway == "10.62.0.1")
        #expect(moreSpecific.preferredSource == "10.62.0.2")

        let blackhole = try lookup.lookup("198.51.100.7")
        #expect(blackhole.type == .blackhole && blackhole.outputInterfaceIndex == nil && blackhole.error == "Invalid argument")
        let unreachable = try lookup.lookup("198.51.101.7")
        #expect(unreachable.type == .unreachable && unreachable.error == "No route to host")
        let prohibit = try lookup.lookup("198.51.102.7")
        #expect(prohibit.type == .prohibit && prohibit.error == "Permission denied")

        let v6 = try lookup.lookup("2001:db8:99::1")
        #expect(v6 == RouteLookupResult(address: "2001:db8:99::1", family: .ipv6, type: .unicast, outputInterfaceIndex: eth0,
                                        link: .init(name: "eth0", up: true, carrier: true),
                                        gateway: "2001:db8:61::1", preferredSource: "2001:db8:61::2"))
        let v6Local = try lookup.lookup("::1")
        #expect(v6Local.type == .local)
    }

    @Test(.needsRoot()) func noRouteAtAll() throws {
        let ns = try TestNamespace(tag: "n")
        defer { ns.destroy() }
        let result = try RouteLookup(networkNamespace: ns.name).lookup("192.0.2.1")
        #expect(result.type == .unreachable)
        #expect(result.error == "Network is unreachable")
        #expect(result.outputInterfaceIndex == nil)
    }

    @Test(.needsRoot()) func carrierLossKeepsTheRouteButTheLinkSaysSo() throws {
        let f = try RouteFixture(subnet: 63)
        defer { f.destroy() }
        try f.eth0.dropCarrier()
        let lookup = try RouteLookup(networkNamespace: f.host.name)
        let result = try lookup.lookup("192.0.2.1")
        // The kernel still routes via eth0: the link's flags tell it cannot carry.
        #expect(result.type == .unicast)
        #expect(result.link == .init(name: "eth0", up: true, carrier: false))
        let answer = HostEvaluator.evaluate(host: "192.0.2.1", lookups: [result], status: .initial(since: Date()))
        #expect(!answer.reachable)
        try f.eth0.restoreCarrier()
        #expect(waitUntil { (try? lookup.lookup("192.0.2.1"))?.link?.carrier == true })
    }
}
}

extension SystemTests {
@Suite struct RouteLookupCanonicalTests {
    @Test(.needsRoot()) func addressesComeBackInCanonicalForm() throws {
        let ns = try TestNamespace(tag: "c")
        defer { ns.destroy() }
        let result = try RouteLookup(networkNamespace: ns.name).lookup("0:0:0:0:0:0:0:1")
        #expect(result.address == "::1")
        #expect(result.type == .local)
    }
}
}
