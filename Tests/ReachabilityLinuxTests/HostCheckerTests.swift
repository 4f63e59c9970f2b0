import Foundation
import ReachabilityCore
import Testing
import TestSupport
@testable import ReachabilityLinux

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

/// The status the monitor would report for a `RouteFixture`: eth0 primary, eth1 a second Ethernet.
private func fixtureStatus(_ f: RouteFixture, subnet: Int) throws -> Status {
    let eth0 = Interface(name: "eth0", index: try f.index(of: "eth0"), kind: .ethernet, up: true, carrier: true, operstate: "up",
                         addresses: ["10.\(subnet).0.2/24", "2001:db8:\(subnet)::2/64"], metered: false)
    let eth1 = Interface(name: "eth1", index: try f.index(of: "eth1"), kind: .ethernet, up: true, carrier: true, operstate: "up",
                         addresses: ["10.\(subnet + 1).0.2/24"], metered: false)
    let lo = Interface(name: "lo", index: 1, kind: .loopback, up: true, carrier: true, operstate: "unknown",
                       addresses: ["127.0.0.1/8", "::1/128"], metered: false)
    return Status(status: .ethernet, reachable: true, connectivity: .unknown, primary: eth0, vpn: nil, cellular: nil,
                  expensive: false, ipv4: true, ipv6: true, gateways: ["10.\(subnet).0.1"], flags: [.reachable],
                  interfaces: [lo, eth0, eth1], probe: nil, since: t0)
}

/// A hosts file made for one test.
private func hostsFile(_ text: String) throws -> String {
    let path = NSTemporaryDirectory() + "\(TestResources.prefix)hosts-\(UUID().uuidString)"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

extension ConnectivitySystemTests {
@Suite struct HostCheckerTests {
    @Test(.needsRoot()) func routesAddressesAndNames() throws {
        let f = try RouteFixture(subnet: 65)
        defer { f.destroy() }
        let hosts = try hostsFile("""
            # made for this test
            10.65.0.1     gw.test gateway.test
            2001:db8:65::1 gw.test
            192.0.2.1     far.test   # beyond the default gateway
            198.51.100.7  hole.test
            """)
        defer { unlink(hosts) }
        var configuration = HostChecker.Configuration()
        configuration.networkNamespace = f.host.name
        configuration.hostsFile = hosts
        let checker = HostChecker(configuration: configuration)
        let status = try fixtureStatus(f, subnet: 65)
        func check(_ host: String) throws -> HostCheck { try checker.checkNow(host: host, port: nil, status: { status }).get() }

        let far = try check("far.test")
        #expect(far.reachable && far.status == "ethernet" && far.flags == ["reachable"])
        #expect(far.routes == [Route(address: "192.0.2.1", interface: "eth0", kind: "ethernet", gateway: "10.65.0.1", source: "10.65.0.2", type: "unicast")])

        let gateway = try check("gw.test")
        #expect(gateway.addresses == ["10.65.0.1", "2001:db8:65::1"])
        #expect(gateway.reachable && gateway.flags == ["reachable", "isDirect"])
        #expect(gateway.routes.map(\.gateway) == [nil, nil])
        #expect(gateway.routes.last?.source == "2001:db8:65::2")

        let local = try check("10.65.0.2")
        #expect(local.reachable && local.status == "ethernet" && local.flags == ["reachable", "isDirect", "isLocalAddress"])
        #expect(local.routes.first?.type == "local")

        let hole = try check("hole.test")
        #expect(!hole.reachable && hole.status == "notReachable" && hole.flags == [])
        #expect(hole.routes == [Route(address: "198.51.100.7", interface: nil, kind: nil, gateway: nil, source: nil, type: "blackhole")])
        #expect(!(try check("198.51.101.1")).reachable)

        let specific = try check("203.0.113.5")
        #expect(specific.reachable && specific.routes.first?.interface == "eth1" && specific.routes.first?.gateway == "10.66.0.1")

        let v6 = try check("[2001:db8:99::5]")
        #expect(v6.reachable && v6.routes.first?.gateway == "2001:db8:65::1")

        #expect(checker.checkNow(host: "nowhere.test", port: nil, status: { status }).failureValue
                == .hostNotFound(host: "nowhere.test", reason: "Name or service not known (not in \(hosts))"))
    }

    @Test(.needsRoot()) func carrierLossMakesTheHostUnreachable() throws {
        let f = try RouteFixture(subnet: 67)
        defer { f.destroy() }
        var configuration = HostChecker.Configuration()
        configuration.networkNamespace = f.host.name
        let checker = HostChecker(configuration: configuration)
        var status = try fixtureStatus(f, subnet: 67)
        #expect(try checker.checkNow(host: "192.0.2.1", port: nil, status: { status }).get().reachable)
        try f.eth0.dropCarrier()
        status.interfaces[1].carrier = false
        let answer = try checker.checkNow(host: "192.0.2.1", port: nil, status: { status }).get()
        #expect(!answer.reachable && answer.status == "notReachable")
        // The route via eth1 is unaffected.
        #expect(try checker.checkNow(host: "203.0.113.5", port: nil, status: { status }).get().reachable)
    }

    /// With a port the daemon still only looks routes up: nothing reaches the listener, `tcp` is
    /// null, and the port selects the route (policy routing by destination port).
    @Test(.needsRoot()) func portSelectsTheRouteAndNothingConnects() throws {
        let f = try RouteFixture(subnet: 69)
        defer { f.destroy() }
        // 192.0.2.1 lives in the uplink namespace, behind the default gateway.
        try f.uplink.ip("addr add 192.0.2.1/32 dev lo")
        try f.uplink.listenTCP(port: 8765)
        // TCP to port 8443 goes through eth1 (table 100), everything else through eth0.
        try f.host.ip("route add default via 10.70.0.1 dev eth1 table 100")
        try f.host.ip("rule add ipproto tcp dport 8443 table 100")
        var configuration = HostChecker.Configuration()
        configuration.networkNamespace = f.host.name
        let checker = HostChecker(configuration: configuration)
        let status = try fixtureStatus(f, subnet: 69)
        func check(_ host: String, _ port: Int?) throws -> HostCheck { try checker.checkNow(host: host, port: port, status: { status }).get() }

        let routed = try check("192.0.2.1", 8765)
        #expect(routed.reachable && routed.flags == ["reachable"] && routed.tcp == nil)
        #expect(routed.routes.first?.interface == "eth0")
        let closed = try check("10.69.0.1", 8766)
        #expect(closed.reachable && closed.tcp == nil)
        let blackhole = try check("198.51.100.7", 8765)
        #expect(!blackhole.reachable && blackhole.tcp == nil)

        let byPort = try check("192.0.2.1", 8443)
        #expect(byPort.routes.first?.interface == "eth1" && byPort.routes.first?.gateway == "10.70.0.1", "\(byPort.routes)")
        #expect(try check("192.0.2.1", nil).routes.first?.interface == "eth0")

        // Nothing ever arrived at the listener: no connection accepted, none half-open.
        let connections = try f.uplink.exec("ss -Htn state all '( sport = :8765 )'")
        #expect(!connections.contains("ESTAB") && !connections.contains("SYN-RECV"), "\(connections)")
    }

    @Test func badInput() throws {
        let checker = HostChecker()
        let status = Status.initial(since: Date())
        for host in ["", "exa mple.com", "a;b", String(repeating: "a.", count: 127) + "ab"] {
            guard case let .invalidParameter(parameter, _)? = checker.checkNow(host: host, port: nil, status: { status }).failureValue else {
                Issue.record("\(host.prefix(20)) was not rejected"); continue
            }
            #expect(parameter == "host")
        }
        guard case let .invalidParameter(parameter, _)? = checker.checkNow(host: "127.0.0.1", port: 70000, status: { status }).failureValue else {
            Issue.record("port 70000 was not rejected"); return
        }
        #expect(parameter == "port")
    }
}
}

extension ConnectivitySystemTests {
@Suite struct HostResolverTests {
    @Test func literalsNeverReachTheResolver() {
        let resolver = HostResolver(lookup: { _ in Issue.record("resolver called"); return .success([]) })
        #expect(resolver.resolve(.address("192.0.2.1", .ipv4), host: "192.0.2.1").successValue == ["192.0.2.1"])
        #expect(resolver.resolve(.address("::1", .ipv6), host: "[::1]").successValue == ["::1"])
    }

    @Test(.needsRoot()) func getaddrinfoReadsTheHostsFile() throws {
        // Inside a fresh namespace any DNS query would fail at once; "localhost" comes from /etc/hosts.
        let ns = try TestNamespace(tag: "r")
        defer { ns.destroy() }
        var configuration = HostResolver.Configuration()
        configuration.networkNamespace = ns.name
        let addresses = try HostResolver(configuration: configuration).resolve(.name("localhost"), host: "localhost").get()
        #expect(addresses.contains("127.0.0.1"))
        #expect(Set(addresses).count == addresses.count)
    }

    @Test func aHangingResolutionTimesOutAndBlocksNoOne() async throws {
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let resolver = HostResolver(configuration: { var c = HostResolver.Configuration(); c.timeout = 0.3; return c }(), lookup: { name in
            if name == "slow.test" { release.wait() }
            return .success(["192.0.2.1"])
        })
        let checker = HostChecker(resolver: resolver)
        let status = Status.initial(since: Date())
        async let slow = checker.check(host: "slow.test", port: nil, status: status)
        let fast = await checker.check(host: "fast.test", port: nil, status: status)
        #expect(fast.successValue?.addresses == ["192.0.2.1"])
        let slowResult = await slow
        #expect(slowResult.failureValue == .hostNotFound(host: "slow.test", reason: "resolution timed out after 0.3 s"))
    }

    @Test func tooManyStuckResolutionsAreRefused() {
        let release = DispatchSemaphore(value: 0)
        defer { for _ in 0..<2 { release.signal() } }
        var configuration = HostResolver.Configuration()
        configuration.timeout = 0.1
        configuration.maxInFlight = 2
        let resolver = HostResolver(configuration: configuration, lookup: { _ in release.wait(); return .success(["192.0.2.1"]) })
        for _ in 0..<2 { #expect(resolver.resolve(.name("a.test"), host: "a.test").failureValue?.description.contains("timed out") == true) }
        #expect(resolver.resolve(.name("a.test"), host: "a.test").failureValue == .hostNotFound(host: "a.test", reason: "too many resolutions in progress"))
    }

    @Test func hostsFileParsing() {
        let text = """
            127.0.0.1 localhost
            # 10.0.0.1 commented.test
            10.0.0.2\tTwo.Test two   # trailing comment
            2001:db8::2 two.test
            bogus two.test
            10.0.0.2 two.test
            """
        #expect(HostsFile.addresses(of: "two.test", inText: text) == ["10.0.0.2", "2001:db8::2"])
        #expect(HostsFile.addresses(of: "TWO", inText: text) == ["10.0.0.2"])
        #expect(HostsFile.addresses(of: "commented.test", inText: text) == [])
    }
}
}

extension Result {
    var successValue: Success? { if case let .success(v) = self { return v }; return nil }
    var failureValue: Failure? { if case let .failure(e) = self { return e }; return nil }
}
