import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// Two uplinks, each into a network of its own with a check server of its own at the check's
/// address: the standby check of the second, bound to it, reaches only the second network's
/// server, and its verdict is that interface's, never the machine's.
@Suite struct StandbyIntegrationTests {
    static func config(textfile: String) -> String {
        """
        [Connectivity]
        URL=http://10.77.0.1:8080/generate_204
        Interval=600
        Timeout=2
        StandbyInterval=2
        [Cellular]
        ModemManager=no
        [Metrics]
        TextfileDirectory=\(textfile)
        """
    }

    private static func interface(_ name: String, in status: Status) -> Interface? {
        status.interfaces.first { $0.name == name }
    }

    /// The standby's verdict appears; it changes when only the standby's path breaks (an event
    /// of `interfaces` alone, the status and its connectivity unmoved, the primary's server not
    /// asked); the primary fails and the standby takes over with its known verdict at once,
    /// older than the failover, then checked again (its network has stopped answering by then,
    /// so the fresh verdict differs and cannot be mistaken for the known one).
    @Test(.needsRoot())
    func standbyVerdictsAndFailover() throws {
        let host = try TestNamespace(tag: "sb"), first = try TestNamespace(tag: "sba"), second = try TestNamespace(tag: "sbb")
        defer { host.destroy(); first.destroy(); second.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        let eth0 = try VethUplink(host: host, uplink: first, inner: "eth0", outer: "up0", subnet: 77, metric: 100)
        _ = try VethUplink(host: host, uplink: second, inner: "eth1", outer: "up1", subnet: 78, metric: 200)
        // The second network answers at the check's address too, with a server of its own.
        try second.ip("addr add 10.77.0.1/32 dev lo")
        let primaryServer = try ProbeServer(in: first), standbyServer = try ProbeServer(in: second)
        defer { primaryServer.stop(); standbyServer.stop() }
        let directory = try TemporaryDirectory()
        let daemon = try DaemonUnderTest(namespace: host, config: Self.config(textfile: directory.path))
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("ethernet (eth0) · internet: full")) == true },
                "\(daemon.child.stderr)")
        let status = { try WireJSON.decoder().decode(Status.self, from: Data(daemon.reachctl(["status", "--json"]).stdout.utf8)) }
        #expect(waitUntil(timeout: 15) { (try? Self.interface("eth1", in: status()))??.connectivity == .full }, "\(daemon.child.stderr)")
        #expect(standbyServer.requests.count >= 1)
        #expect(try status().primary?.connectivity == nil && status().connectivity == .full)
        let verbose = try daemon.reachctl(["status", "--verbose"]).stdout
        #expect(verbose.contains("uplink eth0 (ethernet) · primary · internet: full"), "\(verbose)")
        #expect(verbose.contains("uplink eth1 (ethernet) · standby · internet: full"), "\(verbose)")
        let prom = directory.path + "/reachd.prom"
        #expect(waitUntil(timeout: 10) {
            let samples = metricSamples((try? String(contentsOfFile: prom, encoding: .utf8)) ?? "")
            return samples[#"reachd_interface_connectivity{interface="eth1",state="full"}"#] == "1"
                && samples[#"reachd_interface_connectivity{interface="eth0",state="full"}"#] == "1"
        }, "\((try? String(contentsOfFile: prom, encoding: .utf8)) ?? "")")

        let monitor = try EventTruthTests.Monitor(daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        let primaryChecks = primaryServer.requests.count

        // Only the standby's path breaks: its network turns into a portal.
        try standbyServer.set(.redirect("/login"))
        #expect(waitUntil(timeout: 20) { monitor.events.contains { Self.interface("eth1", in: $0.current)?.connectivity == .portal } },
                "\(daemon.child.stderr)")
        let portal = try #require(monitor.events.first { Self.interface("eth1", in: $0.current)?.connectivity == .portal })
        #expect(portal.changes == ["interfaces"])
        #expect(portal.reason.code == .probeResult && portal.reason.interface == "eth1")
        #expect(portal.current.connectivity == .full && portal.current.primary?.name == "eth0")
        #expect(primaryServer.requests.count == primaryChecks)
        #expect(try daemon.reachctl(["status"]).stdout.contains("ethernet (eth0) · internet: full"))

        // The standby's network stops answering: every check from now on hangs until Timeout=
        // and says limited. A request that hangs has arrived, so the check before it has ended.
        let asked = standbyServer.requests.count
        try standbyServer.set(.hang)
        #expect(waitUntil(timeout: 20) { standbyServer.requests.count > asked })

        // The primary fails: eth1 takes over, its known verdict (portal) shown at once.
        let failedAt = Date()
        try eth0.dropCarrier()
        #expect(waitUntil(timeout: 20) {
            monitor.events.contains { $0.current.primary?.name == "eth1" && $0.current.connectivity == .portal }
        }, "\(daemon.child.stderr)")
        let takeover = try #require(monitor.events.first { $0.current.primary?.name == "eth1" })
        #expect(takeover.current.connectivity == .portal)   // in the very event of the move
        let known = try #require(takeover.current.probe)
        #expect(known.checkedAt < failedAt, "\(known.checkedAt) \(failedAt)")
        #expect(known.portalUrl?.hasSuffix("/login") == true)
        #expect(Self.interface("eth1", in: takeover.current)?.connectivity == nil)   // the primary's verdict is the machine's
        #expect(daemon.child.stderr.contains("failover to eth1"), "\(daemon.child.stderr)")
        // Then checked over the new path: the fresh verdict replaces it.
        #expect(waitUntil(timeout: 20) {
            monitor.events.contains { $0.current.primary?.name == "eth1" && $0.current.connectivity == .limited }
        }, "\(daemon.child.stderr)")
        let fresh = try #require(monitor.events.last { $0.current.connectivity == .limited }?.current.probe)
        #expect(fresh.checkedAt > failedAt)
        EventTruthTests.checkFullStream(monitor.events, "standbyVerdictsAndFailover")
    }

    /// The default kind of `URL=`, a host name, resolved for the standby check as for the
    /// primary's (the system's resolver, here a server of the test's own in the first network):
    /// the standby is `full`, as it is with an address literal. At `--log-level notice` a failed
    /// standby check is in the log, with why it failed.
    @Test(.needsRoot())
    func standbyResolvesHostName() throws {
        let host = try TestNamespace(tag: "sbn"), first = try TestNamespace(tag: "sbna"), second = try TestNamespace(tag: "sbnb")
        defer { host.destroy(); first.destroy(); second.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: first, inner: "eth0", outer: "up0", subnet: 77, metric: 100)
        _ = try VethUplink(host: host, uplink: second, inner: "eth1", outer: "up1", subnet: 78, metric: 200)
        try second.ip("addr add 10.77.0.1/32 dev lo")
        let dns = try DNSServer(in: first, address: "10.77.0.1", records: [("check.test", "A", "10.77.0.1")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let primaryServer = try ProbeServer(in: first), standbyServer = try ProbeServer(in: second)
        defer { primaryServer.stop(); standbyServer.stop() }
        let config = """
            [Connectivity]
            URL=http://check.test:8080/generate_204
            Interval=600
            Timeout=2
            StandbyInterval=1
            [Cellular]
            ModemManager=no
            """
        let daemon = try DaemonUnderTest(namespace: host, config: config, launch: .init(logLevel: "notice"))
        let status = { try WireJSON.decoder().decode(Status.self, from: Data(daemon.reachctl(["status", "--json"]).stdout.utf8)) }
        #expect(waitUntil(timeout: 15) { (try? status().connectivity) == .full }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 15) { (try? Self.interface("eth1", in: status()))??.connectivity == .full },
                "\(daemon.child.stderr)")
        #expect(standbyServer.requests.count >= 1)
        #expect(!daemon.child.stderr.contains("resolutions in progress"), "\(daemon.child.stderr)")

        // The standby's network stops answering: the notice names the uplink and the reason.
        try standbyServer.set(.hang)
        #expect(waitUntil(timeout: 20) { (try? Self.interface("eth1", in: status()))??.connectivity == .limited },
                "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 5) { daemon.child.stderr.contains("standby check on eth1 failed: internet: limited") },
                "\(daemon.child.stderr)")
    }
}
}
