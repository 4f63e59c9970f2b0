import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension ConnectivitySystemTests {
/// Two internets judged apart, end to end: reachd in `host` on a dual-stack veth, the check
/// server and the resolver the daemon's getaddrinfo asks in `uplink`.
@Suite struct FamilyIntegrationTests {
    static let config = """
        [Connectivity]
        Enabled=yes
        URL=http://check.test:8080/generate_204
        Interval=60
        Timeout=3
        [Cellular]
        ModemManager=no
        [Limits]
        ProbeMinInterval=100ms
        """

    /// The uplink with IPv4 and IPv6 (no duplicate address detection, so no wait), default
    /// routes of both families, and a resolver holding `check.test` in both.
    static func network(_ host: TestNamespace, _ uplink: TestNamespace, dns mode: DNSServer.Mode = .answer) throws -> DNSServer {
        _ = try VethUplink(host: host, uplink: uplink)
        try uplink.ip("addr add fd77::1/64 dev up0 nodad")
        try host.ip("addr add fd77::2/64 dev eth0 nodad")
        try host.ip("-6 route add default via fd77::1 dev eth0 metric 100")
        let dns = try DNSServer(in: uplink, address: "10.77.0.1",
                                records: [("check.test", "A", "10.77.0.1"), ("check.test", "AAAA", "fd77::1")], mode: mode)
        try dns.useAsResolver(for: host)
        return dns
    }

    static func status(_ daemon: DaemonUnderTest) -> Status? {
        guard let reply = try? daemon.reachctl(["status", "--json"]), reply.status == 0 else { return nil }
        return try? WireJSON.decoder().decode(Status.self, from: Data(reply.stdout.utf8))
    }

    /// What a failed expectation shows of the daemon: whether it still runs, its last log lines.
    static func describe(_ daemon: DaemonUnderTest) -> String {
        "reachd \(daemon.child.isRunning ? "running" : "exited with \(daemon.child.wait(timeout: 0))"); its log ends: \(daemon.child.stderr.suffix(4000))"
    }

    /// Asks for checks until `condition` holds of the status (a check within the floor shares
    /// the last verdict, so several may be needed); the last status reachd gave.
    static func probe(_ daemon: DaemonUnderTest, until condition: (Status) -> Bool) -> Status? {
        var last: Status?
        _ = waitUntil(timeout: 20) {
            _ = try? daemon.reachctl(["probe"])
            guard let status = status(daemon) else { return false }
            last = status
            return condition(status)
        }
        return last
    }

    /// Asks for checks until `condition` holds of one newer than `date`; the last such verdict,
    /// as `Probe()` answers it (the status keeps a verdict's details until its result changes).
    static func freshCheck(_ daemon: DaemonUnderTest, after date: Date, until condition: (Probe) -> Bool) -> Probe? {
        var fresh: Probe?
        _ = waitUntil(timeout: 20) {
            guard let reply = try? daemon.reachctl(["probe", "--json"]), reply.status == 0,
                  let probe = try? WireJSON.decoder().decode(Probe.self, from: Data(reply.stdout.utf8)),
                  probe.checkedAt > date else { return false }
            fresh = probe
            return condition(probe)
        }
        return fresh
    }

    @Test(.needsRoot()) func bothFamiliesThenIPv6Broken() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let dns = try Self.network(host, uplink)
        defer { dns.stop() }
        let dualStack = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { dualStack.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let both = Self.probe(daemon) { $0.ipv4Connectivity == .full && $0.ipv6Connectivity == .full }
        #expect(both?.connectivity == .full, "\(String(describing: both?.probe)) \(daemon.child.stderr)")
        #expect(both?.ipv4 == true && both?.ipv6 == true)
        #expect(both?.probe?.failedStage == nil)
        #expect(both?.probe?.ipv4Result == .full && both?.probe?.ipv6Result == .full)
        // Each family asked the server once per check: two requests, one over each family.
        #expect(dualStack.requests.count >= 2)

        // IPv6 broken: the server answers on IPv4 alone, an IPv6 connection is refused.
        // (Both servers use one directory: the first is stopped before the second is made.)
        dualStack.stop()
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        // (While the server restarts, both families fail: wait for the new one's IPv4 answer.)
        let broken = Self.probe(daemon) { $0.ipv6Connectivity == .limited && $0.ipv4Connectivity == .full }
        #expect(broken?.connectivity == .full, "\(String(describing: broken?.probe)) \(server.requests)")
        #expect(broken?.ipv4Connectivity == .full)
        #expect(broken?.ipv6Connectivity == .limited)
        #expect(broken?.probe?.ipv6Result == .limited)
        #expect(broken?.probe?.failedStage == nil)
        #expect(try daemon.reachctl(["status"]).stdout.contains("internet: full (IPv6: limited)"))
        // `wait --internet` means the overall verdict; `--family ipv6` waits for IPv6's own.
        #expect(try daemon.reachctl(["wait", "--internet", "--timeout", "5"]).status == 0)
        #expect(try daemon.reachctl(["wait", "--internet", "--family", "ipv4", "--timeout", "5"]).status == 0)
        #expect(try daemon.reachctl(["wait", "--internet", "--family", "ipv6", "--timeout", "1", "-q"]).status == 1)
    }

    /// IPv4 broken: its address answers nothing (the SYN is dropped), IPv6 works: full, with
    /// IPv4's own verdict limited at the connection.
    @Test(.needsRoot()) func ipv4BrokenIPv6Carries() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        try uplink.ip("addr add fd77::1/64 dev up0 nodad")
        try host.ip("addr add fd77::2/64 dev eth0 nodad")
        try host.ip("-6 route add default via fd77::1 dev eth0 metric 100")
        // 10.78.0.1 goes out the default route; nobody there answers.
        let dns = try DNSServer(in: uplink, address: "fd77::1",
                                records: [("check.test", "A", "10.78.0.1"), ("check.test", "AAAA", "fd77::1")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let status = Self.probe(daemon) { $0.ipv4Connectivity == .limited && $0.ipv6Connectivity == .full }
        #expect(status?.connectivity == .full, "\(String(describing: status?.probe))")
        #expect(status?.probe?.ipv4Result == .limited && status?.probe?.ipv6Result == .full)
        #expect(status?.probe?.failedStage == nil)
        #expect(try daemon.reachctl(["status"]).stdout.contains("internet: full (IPv4: limited)"))
    }

    /// The public resolvers routed into a tunnel of their own (a DNS-only VPN): the internet
    /// path is still the uplink's, no VPN, full.
    @Test(.needsRoot()) func resolversRoutedElsewhereLeaveTheStatus() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let dns = try Self.network(host, uplink)
        defer { dns.stop() }
        let tun = try HeldTun(namespace: host, name: "tun0")
        defer { tun.stop() }
        try host.ip("addr add 10.8.0.2/24 dev tun0")
        try host.ip("link set tun0 up")
        for resolver in ["1.1.1.1", "8.8.8.8", "9.9.9.9", "208.67.222.222"] { try host.ip("route add \(resolver)/32 dev tun0") }
        try host.ip("-6 addr add fd08::2/64 dev tun0 nodad")
        for resolver in ["2606:4700:4700::1111", "2001:4860:4860::8888", "2620:fe::fe", "2620:119:35::35"] {
            try host.ip("-6 route add \(resolver)/128 dev tun0")
        }
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let status = Self.probe(daemon) { $0.connectivity == .full && $0.ipv6Connectivity == .full }
        #expect(status?.vpn == nil, "\(String(describing: status?.routing))")
        #expect(status?.primary?.name == "eth0")
        #expect(status?.flags.contains(.transientConnection) == false)
        #expect(status?.routing.map(\.interface) == ["eth0", "eth0"])
        #expect(status?.routing.map(\.destination) == ["31.0.0.1", "2400::1"])
        #expect(status?.ipv4Connectivity == .full)
    }

    /// IPv6 alone, the router announcing a NAT64 prefix: online over IPv6, IPv4 `none` and not
    /// checked, `nat64` in the flags.
    @Test(.needsRoot()) func ipv6OnlyWithPREF64IsOnline() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink, defaultRoute: false)
        try host.ip("-4 addr flush dev eth0")
        try uplink.ip("addr add fd77::1/64 dev up0 nodad")
        try host.ip("addr add fd77::2/64 dev eth0 nodad")
        try host.ip("-6 route add default via fd77::1 dev eth0 metric 100")
        let dns = try DNSServer(in: uplink, address: "fd77::1", records: [("check.test", "AAAA", "fd77::1")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)
        try RouterAdvertiser.send(from: uplink, interface: veth.outer, options: [RouterAdvertiser.pref64("64:ff9b::", lifetime: 1800)])

        let online = Self.probe(daemon) { $0.connectivity == .full && $0.flags.contains(.nat64) }
        #expect(online?.flags.contains(.nat64) == true, "\(String(describing: online))")
        #expect(online?.primary?.nat64Prefix == "64:ff9b::/96")
        #expect(online?.ipv4 == false && online?.ipv6 == true)
        #expect(online?.ipv4Connectivity == Connectivity.none && online?.ipv6Connectivity == .full)
        #expect(online?.probe?.ipv4Result == nil && online?.probe?.ipv6Result == .full)
        // IPv4 has no path: the line's end says so (`· IPv6`), no "(IPv4: none)" beside the verdict.
        #expect(try daemon.reachctl(["status"]).stdout.contains("internet: full · IPv6"))
    }

    /// IPv6 alone, no PREF64, but the resolver synthesizes AAAA records in 64:ff9b::/96 (DNS64):
    /// online, `nat64`.
    @Test(.needsRoot()) func ipv6OnlyWithDNS64IsOnline() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink, defaultRoute: false)
        try host.ip("-4 addr flush dev eth0")
        try uplink.ip("addr add fd77::1/64 dev up0 nodad")
        // The NAT64 gateway's address for 10.77.0.1, answered by the server itself.
        try uplink.ip("addr add 64:ff9b::a4d:1/128 dev up0 nodad")
        try host.ip("addr add fd77::2/64 dev eth0 nodad")
        try host.ip("-6 route add default via fd77::1 dev eth0 metric 100")
        let dns = try DNSServer(in: uplink, address: "fd77::1", records: [("check.test", "AAAA", "64:ff9b::a4d:1")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let online = Self.probe(daemon) { $0.connectivity == .full }
        #expect(online?.flags.contains(.nat64) == true, "\(String(describing: online))")
        #expect(online?.probe?.nat64 == true)
        #expect(online?.primary?.nat64Prefix == nil)
        #expect(online?.ipv4Connectivity == Connectivity.none && online?.ipv6Connectivity == .full)
    }

    /// A CLAT (a held tun with 192.0.0.4/29 and the IPv4 default route): the transport is the
    /// uplink, no VPN, `nat64`; the IPv4 check leaves by the CLAT (its SYN is seen there), the
    /// IPv6 one by the uplink.
    @Test(.needsRoot()) func clatCarriesTheIPv4Check() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink, defaultRoute: false)
        try host.ip("-4 addr flush dev eth0")
        try uplink.ip("addr add fd77::1/64 dev up0 nodad")
        try host.ip("addr add fd77::2/64 dev eth0 nodad")
        try host.ip("-6 route add default via fd77::1 dev eth0 metric 100")
        let clat = try HeldTun(namespace: host, name: "clat")
        defer { clat.stop() }
        try host.ip("addr add 192.0.0.4/29 dev clat")
        try host.ip("link set clat up")
        try host.ip("route add default dev clat metric 2050")
        let dns = try DNSServer(in: uplink, address: "fd77::1",
                                records: [("check.test", "AAAA", "fd77::1"), ("check.test", "A", "192.0.2.80")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let status = Self.probe(daemon) { $0.ipv6Connectivity == .full && !clat.syns.isEmpty }
        #expect(status?.primary?.name == "eth0", "\(String(describing: status))")
        #expect(status?.vpn == nil)
        #expect(status?.flags.contains(.nat64) == true)
        #expect(status?.flags.contains(.transientConnection) == false)
        #expect(status?.interfaces.first { $0.name == "clat" }?.kind == .virtual)
        #expect(status?.ipv4 == true && status?.ipv6 == true)
        #expect(status?.connectivity == .full)
        #expect(clat.syns.allSatisfy { $0 == "192.0.2.80:8080" }, "\(clat.syns)")
        #expect(!clat.syns.isEmpty)
    }

    @Test(.needsRoot()) func resolverDeadThenServfailThenBack() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let dns = try Self.network(host, uplink, dns: .silent)
        defer { dns.stop() }
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config)

        let silent = Self.probe(daemon) { $0.connectivity == .limited }
        #expect(silent?.probe?.failedStage == .resolve, "\(String(describing: silent?.probe))")
        #expect(silent?.ipv4Connectivity == .limited && silent?.ipv6Connectivity == .limited)
        #expect(server.requests.isEmpty)
        #expect(try daemon.reachctl(["status"]).stdout.contains("internet: limited (DNS)"))

        try dns.set(.servfail)
        // A check after the switch names the resolver's SERVFAIL (a check begun before it may
        // still end with the silent server's time-out); the status stays limited, for DNS.
        let servfail = Self.freshCheck(daemon, after: Date()) { $0.error?.contains("Temporary failure in name resolution") == true }
        #expect(servfail?.result == .limited, "\(String(describing: servfail)) \(Self.describe(daemon))")
        #expect(servfail?.failedStage == .resolve, "\(String(describing: servfail))")
        #expect(servfail?.error?.contains("Temporary failure in name resolution") == true, "\(String(describing: servfail?.error))")
        let afterServfail = Self.status(daemon)
        #expect(afterServfail?.connectivity == .limited && afterServfail?.probe?.failedStage == .resolve,
                "\(String(describing: afterServfail?.probe)) \(Self.describe(daemon))")

        try dns.set(.answer)
        let back = Self.probe(daemon) { $0.connectivity == .full }
        #expect(back?.ipv4Connectivity == .full && back?.ipv6Connectivity == .full, "\(Self.describe(daemon))")
        #expect(back?.probe?.failedStage == nil)
    }
}
}
