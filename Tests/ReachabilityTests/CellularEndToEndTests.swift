import Foundation
import Testing
import Reachability
import ReachabilityClient
import ReachabilityCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// Cellular end to end: the reachd binary asks a dbusmock ModemManager on a private bus (never the
/// machine's), whose modem's net port is a veth with the default route in a test namespace. Every
/// generation change reaches a varlink subscriber, `reachctl monitor` and a Reachability callback
/// exactly once, in order; the `[Cellular]` switch follows SIGHUP.
@Suite struct CellularEndToEndTests {
    @Test("LTE → 5G NSA → EDGE → modem removed → ModemManager restarted → SIGHUP off/on, each once",
          .needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func generationsReachEveryClient() async throws {
        let host = try TestNamespace(tag: "c"), network = try TestNamespace(tag: "cu")
        defer { host.destroy(); network.destroy() }
        // No IPv6: link-local addresses coming and going are not what this test counts.
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        let uplink = try VethUplink(host: host, uplink: network, inner: "mm0", outer: "up0", subnet: 89)
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)

        let off = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=no\n"
        let on = "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=yes\n"
        let daemon = try DaemonUnderTest(namespace: host, config: on,
                                         environment: [systemBusVariable: bus.address])
        defer { daemon.stop() }
        // reachd waits for ModemManager's first answer before it serves: LTE from the start.
        #expect(try await ReachabilityClient(socketPath: daemon.socketPath).status().status == .wwan4G, "\(daemon.child.stderr)")

        // The three clients.
        let client = ReachabilityClient(socketPath: daemon.socketPath)
        let subscribed = Recorder<ReachabilityEvent>()
        let task = Task { for try await event in client.events(statusOnly: true) { subscribed.append(event) } }
        defer { task.cancel() }
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--status-only", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGINT); monitor.wait() }
        func monitored() -> [ReachabilityEvent] {
            monitor.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
        }
        let reachability = try Reachability(source: .daemon, socketPath: daemon.socketPath)
        let observed = Observed(reachability)
        try reachability.startNotifier()
        defer { reachability.stopNotifier() }

        var expected: [NetworkStatus] = []
        /// Waits until every client's latest is `status`.
        func step(_ status: NetworkStatus, _ what: String) async {
            expected.append(status)
            let n = expected.count
            let all = await eventually {
                subscribed.all.count >= n && subscribed.all.last?.current.status == status
                    && monitored().count >= n && monitored().last?.current.status == status
                    && observed.callbacks.count >= n && observed.callbacks.all.last?.status == status
                    && observed.notifications.count >= n && observed.notifications.all.last == status
            }
            #expect(all, """
                \(what): expected \(status); subscriber \(subscribed.all.map(\.current.status)), \
                monitor \(monitored().map(\.current.status)), callbacks \(observed.callbacks.all.map(\.status)), \
                notifications \(observed.notifications.all); reachd: \(daemon.child.stderr.suffix(2000))
                """)
        }

        await step(.wwan4G, "LTE")
        #expect(observed.callbacks.all.first == Delivery(reachable: true, status: .wwan4G, connection: .cellular))
        #expect(reachability.isReachableViaWWAN)

        try mm.setAccessTechnologies(0, ModemAccessTechnology([.lte, .fiveGNR]).rawValue)
        await step(.wwan5G, "5G NSA")
        #expect(subscribed.all.last?.current.cellular?.generation == "5G")
        #expect(subscribed.all.last?.reason.code == .modemChanged)

        try mm.setAccessTechnologies(0, ModemAccessTechnology([.gsm, .gprs, .edge]).rawValue)
        await step(.wwan2G, "EDGE")
        #expect(subscribed.all.last?.current.cellular?.accessTechnology == "edge")
        #expect(monitored().last?.current.cellular?.accessTechnology == "edge")
        #expect(reachability.connection == .cellular)

        // The modem goes: mm0 falls back to what sysfs says, plain ethernet.
        try mm.control("RemoveModem", "0")
        await step(.ethernet, "modem removed")
        #expect(subscribed.all.last?.current.cellular == nil)
        #expect(reachability.connection == .ethernet)

        // ModemManager crashes (nothing to forget) and comes back with the modem on LTE.
        mm.kill()
        try mm.start()
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)
        await step(.wwan4G, "ModemManager restarted")

        // `[Cellular] ModemManager=no` on SIGHUP: the modem is forgotten; `yes`: asked again.
        try daemon.writeConfig(off)
        daemon.reload()
        await step(.ethernet, "SIGHUP with ModemManager=no")
        try daemon.writeConfig(on)
        daemon.reload()
        await step(.wwan4G, "SIGHUP with ModemManager=yes")

        // A marker change: had any step been delivered twice, the duplicate would come before it.
        try host.ip("link set \(uplink.inner) down")
        await step(.notReachable, "marker: link down")

        #expect(subscribed.all.map(\.current.status) == expected)
        #expect(monitored().map(\.current.status) == expected)
        #expect(monitor.lines.count == expected.count, "\(monitor.lines)")
        #expect(observed.callbacks.all.map(\.status) == expected)
        #expect(observed.notifications.all == expected)
        for events in [subscribed.all, monitored()] {
            for (a, b) in zip(events, events.dropFirst()) { #expect(b.previous?.status == a.current.status) }
        }
    }
}
}
