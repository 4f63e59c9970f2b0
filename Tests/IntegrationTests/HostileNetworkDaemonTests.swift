import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension ConnectivitySystemTests {
/// reachd itself on a link where a host floods router advertisements: what subscribers and the
/// journal get is bounded (docs/captive-portal.md, "What the network can make reachd do").
@Suite struct HostileNetworkDaemonTests {
    private static func events(_ monitor: Child) -> [ReachabilityEvent] {
        monitor.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
    }

    /// 1,000 advertisements, each with a new DNS server: about one event a second to a
    /// subscriber, and no per-event line at `info` (the journal's priority 6) for them; an address
    /// change after them is an event and a line at `info` as ever, with the newest servers.
    @Test(.needsRoot("starts reachd in a namespace")) func aFloodOfDNSServersIsMergedAndNotLoggedAtInfo() throws {
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink)
        // Journal priorities on the lines (`<6>` info, `<7>` debug): the daemon runs at debug.
        let daemon = try DaemonUnderTest(namespace: host, environment: ["JOURNAL_STREAM": "0:0"])
        defer { daemon.stop() }
        let linkLocal = try #require(try veth.settledLinkLocal())
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status", "--json"]).stdout.contains(linkLocal)) == true })
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGTERM); monitor.wait() }
        #expect(waitUntil(timeout: 10) { !Self.events(monitor).isEmpty })
        let linesBefore = daemon.child.stderr.split(separator: "\n").count

        let started = Date()
        try RouterAdvertiser.flood(from: uplink, interface: veth.outer, cycle: [[]], count: 1000, perSecond: 500, newDNSServer: true)
        // The marker: an address, never held back; its event carries the last server (the 1,000th).
        try host.ip("addr add 10.77.0.9/24 dev \(veth.inner)")
        #expect(waitUntil(timeout: 15) {
            Self.events(monitor).last?.current.primary?.addresses.contains("10.77.0.9/24") == true
        })
        let seconds = Date().timeIntervalSince(started)
        let events = Self.events(monitor).dropFirst()
        let marker = try #require(events.first { $0.current.primary?.addresses.contains("10.77.0.9/24") == true })
        #expect(marker.current.primary?.dns.contains("2001:db8:ffff::3e8") == true, "\(marker.current.primary?.dns ?? [])")
        let announced = events.filter { $0.reason.code == .routerAdvertisement }
        #expect(announced.count <= Int(seconds) + 2, "\(announced.count) events in \(seconds) s")

        #expect(waitUntil(timeout: 5) { daemon.child.stderr.contains("<6>#\(marker.sequence) ") }, "\(daemon.child.stderr.suffix(500))")
        let lines = daemon.child.stderr.split(separator: "\n").dropFirst(linesBefore)
        let infoLines = lines.filter { $0.hasPrefix("<6>#") && $0.contains(" routerAdvertisement ") }
        let debugLines = lines.filter { $0.hasPrefix("<7>#") && $0.contains(" routerAdvertisement ") }
        #expect(infoLines.isEmpty, "\(infoLines.prefix(3))")
        #expect(debugLines.count == announced.count, "\(debugLines.count) lines, \(announced.count) events")
    }

    /// 500 routers at a time, a new one (and the oldest one's withdrawal) 200 times a second,
    /// for 10 s, on a dual-stack link whose check server works: about one event a second to a
    /// subscriber and to a GLib app, checks no faster than the network's floor, IPv6's verdict
    /// `full` during the flood, and eight routers listed with the rest counted.
    @Test(.needsRoot("starts reachd in a namespace"), .requires(.python3))
    func rotatingRoutersSetNoRate() throws {
        let module = Paths.packageRoot + "/.build/gio/libgioreachd.so"
        guard FileManager.default.fileExists(atPath: module) else { throw SetupError("\(module) is missing: run `make gio`") }
        let host = try TestNamespace(tag: "h"), uplink = try TestNamespace(tag: "u")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink)
        // IPv6's check server is on the link (fd77::/64): only the routers' default routes give
        // IPv6 a path, and the check's connection needs none of them.
        try uplink.ip("addr add fd77::1/64 dev \(veth.outer) nodad")
        try host.ip("addr add fd77::2/64 dev \(veth.inner) nodad")
        let dns = try DNSServer(in: uplink, address: veth.gatewayAddress,
                                records: [("check.test", "A", veth.gatewayAddress), ("check.test", "AAAA", "fd77::1")])
        defer { dns.stop() }
        try dns.useAsResolver(for: host)
        let server = try ProbeServer(in: uplink, mode: .noContent, dualStack: true)
        defer { server.stop() }
        let daemon = try DaemonUnderTest(namespace: host, config: """
            [Connectivity]
            Enabled=yes
            URL=http://check.test:8080/generate_204
            Interval=60
            Timeout=3
            [Cellular]
            ModemManager=no
            """)
        defer { daemon.stop() }
        _ = try veth.settledLinkLocal()
        #expect(waitUntil(timeout: 15) { Self.status(daemon)?.ipv4Connectivity == .full }, "\(daemon.child.stderr.suffix(2000))")
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGTERM); monitor.wait() }
        var environment = ProcessInfo.processInfo.environment.filter {
            !["GIO_USE_NETWORK_MONITOR", "GIO_MODULE_DIR", "DBUS_SESSION_BUS_ADDRESS", "G_MESSAGES_DEBUG"].contains($0.key)
        }
        environment["GIO_EXTRA_MODULES"] = Paths.packageRoot + "/.build/gio"
        environment["REACHD_SOCKET"] = daemon.socketPath
        let app = try Child("/usr/bin/python3", [Paths.file("Tests/python/gio_monitor.py")], environment: environment)
        defer { app.signal(SIGTERM); app.wait() }
        #expect(waitUntil(timeout: 10) { !Self.events(monitor).isEmpty && app.lines.contains { $0.contains("\"ready\"") } })
        let eventsBefore = Self.events(monitor).count
        let changedBefore = app.lines.filter { $0.contains("\"event\": \"changed\"") }.count
        let requestsBefore = server.requests.count

        let started = Date()
        let sender = try RouterAdvertiser.rotateRouters(from: uplink, interface: veth.outer, routers: 500, count: 2000, perSecond: 200)
        var duringFlood: [Status] = []
        while sender.isRunning && Date().timeIntervalSince(started) < 30 {
            if let status = Self.status(daemon) { duringFlood.append(status) }
            Thread.sleep(forTimeInterval: 0.5)
        }
        let senderStatus = sender.wait(timeout: 30)
        #expect(senderStatus == 0, "sender: \(sender.lines) \(sender.stderr.suffix(1000))")
        let seconds = Date().timeIntervalSince(started)

        // IPv6's verdict came while routers kept coming, with eight of them listed.
        #expect(duringFlood.contains { $0.ipv6 && $0.ipv6Connectivity == .full },
                "\(duringFlood.map { "\($0.ipv6Connectivity)" }) \(daemon.child.stderr.suffix(2000))")
        let crowded = duringFlood.filter { $0.gatewaysOmitted > 0 }
        #expect(!crowded.isEmpty)
        for status in crowded {
            #expect(status.gateways.count == 8 && status.gateways.first == veth.gatewayAddress, "\(status.gateways)")
        }
        // About one event a second, to a subscriber and to a GLib app.
        let events = Self.events(monitor).count - eventsBefore
        #expect(events <= 2 * Int(seconds) + 5, "\(events) events in \(seconds) s")
        let changed = app.lines.filter { $0.contains("\"event\": \"changed\"") }.count - changedBefore
        #expect(changed <= 2 * Int(seconds) + 5, "\(changed) network-changed in \(seconds) s")
        #expect(app.isRunning)
        // Checks no faster than the floor (2 s; each check asks once per family).
        let requests = server.requests.count - requestsBefore
        #expect(requests <= 2 * (Int(seconds / 2) + 2), "\(requests) requests in \(seconds) s")
    }

    private static func status(_ daemon: DaemonUnderTest) -> Status? {
        guard let reply = try? daemon.reachctl(["status", "--json"]), reply.status == 0 else { return nil }
        return try? WireJSON.decoder().decode(Status.self, from: Data(reply.stdout.utf8))
    }
}
}
