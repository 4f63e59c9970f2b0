import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
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
}
}
