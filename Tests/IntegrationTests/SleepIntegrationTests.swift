import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// reachd under a logind (python-dbusmock's template on a private system bus) that puts the
/// machine to sleep and wakes it: what subscribers see, the inhibitor, the check after wake.
@Suite struct SleepIntegrationTests {
    private static func events(_ monitor: Child) -> [ReachabilityEvent] {
        monitor.lines.compactMap { try? WireJSON.decoder().decode(ReachabilityEvent.self, from: Data($0.utf8)) }
    }

    /// A forged PrepareForSleep changes nothing. Before sleep: one event, reason `sleeping`,
    /// connectivity `unknown`, and only then is the delay inhibitor released. After wake: connectivity comes back from one fresh check (the
    /// server sees it), in the event that carries `resumed`; the inhibitor is taken again.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func sleepMakesConnectivityUnknownAndWakeChecksAfresh() throws {
        let host = try TestNamespace(tag: "sl"), uplink = try TestNamespace(tag: "slu")
        defer { host.destroy(); uplink.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let config = """
            [Connectivity]
            URL=http://10.77.0.1:8080/generate_204
            Interval=600
            Timeout=2
            [Cellular]
            ModemManager=no
            """
        let daemon = try DaemonUnderTest(namespace: host, config: config, environment: [systemBusVariable: bus.address])
        #expect(waitUntil(timeout: 15) { (try? daemon.reachctl(["status"]).stdout.contains("internet: full")) == true },
                "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")
        let monitor = try Child(Binaries.reachctl, ["monitor", "--json", "--changes", "connectivity", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGTERM); monitor.wait() }
        #expect(waitUntil(timeout: 10) { !Self.events(monitor).isEmpty })
        let checks = server.requests.count

        // A local peer forges logind's signal, broadcast and addressed to reachd: nothing happens
        // (the subscriber's next event, below, is the real sleep's).
        let sent = try sh("\(Binaries.python) \(Paths.packageRoot)/Tests/python/forge_signal.py '\(bus.address)' prepare-for-sleep")
        #expect((Int(sent.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 2, "\(sent.output)")
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("ignoring PrepareForSleep from :") }, "\(daemon.child.stderr)")
        #expect(try logind.inhibitors() == ["sleep reachd delay"])

        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { Self.events(monitor).count >= 2 }, "\(daemon.child.stderr)")
        let sleeping = try #require(Self.events(monitor).last)
        #expect(sleeping.reason.code == .sleeping)
        #expect(sleeping.previous?.connectivity == .full && sleeping.current.connectivity == .unknown)
        #expect(sleeping.current.probe == nil)
        // Released once that was published, so logind may go on.
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == [] }, "\(daemon.child.stderr)")
        #expect(server.requests.count == checks)

        try logind.prepareForSleep(false)
        #expect(waitUntil(timeout: 15) { Self.events(monitor).count >= 3 }, "\(daemon.child.stderr)")
        let resumed = try #require(Self.events(monitor).last)
        #expect(resumed.reason.code == .resumed)
        #expect(resumed.current.connectivity == .full)
        #expect(server.requests.count == checks + 1)
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")
        #expect(daemon.child.stderr.contains("sleep: the machine woke"))

        // The marker: a manual check is the next thing the subscriber sees nothing of (full stays
        // full), and no other connectivity event came in between.
        #expect(try daemon.reachctl(["probe"]).status == 0)
        #expect(Self.events(monitor).map(\.reason.code) == [.initial, .sleeping, .resumed], "\(monitor.lines)")
    }

    /// Without logind on the system bus (a container) reachd says so once and runs as before.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl))
    func withoutLogindReachdSaysSoOnce() throws {
        let host = try TestNamespace(tag: "nl"), uplink = try TestNamespace(tag: "nlu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let bus = try PrivateBus()
        let daemon = try DaemonUnderTest(namespace: host, environment: [systemBusVariable: bus.address])
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("logind is not running") }, "\(daemon.child.stderr)")
        #expect(try daemon.reachctl(["status"]).status == 0)
        #expect(daemon.child.stderr.components(separatedBy: "logind is not running").count == 2, "\(daemon.child.stderr)")
    }
}
}
