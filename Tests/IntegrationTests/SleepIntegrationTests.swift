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

    /// With a standby uplink checked too, both checks start at the wake and either may answer
    /// first; the standby's event used to take the `resumed` meant for the check's (3 wakes in
    /// 4). Four sleeps in a row: each is one `sleeping` event that drops both verdicts, each
    /// wake one event with `resumed` that brings connectivity back, and the standby's verdict
    /// comes back in an event of its own, reason `probeResult` naming eth1.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func everyWakeIsResumedWithAStandbyUplink() throws {
        let host = try TestNamespace(tag: "ss"), first = try TestNamespace(tag: "ssa"), second = try TestNamespace(tag: "ssb")
        defer { host.destroy(); first.destroy(); second.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: first, inner: "eth0", outer: "up0", subnet: 77, metric: 100)
        _ = try VethUplink(host: host, uplink: second, inner: "eth1", outer: "up1", subnet: 78, metric: 200)
        try second.ip("addr add 10.77.0.1/32 dev lo")
        let primaryServer = try ProbeServer(in: first), standbyServer = try ProbeServer(in: second)
        defer { primaryServer.stop(); standbyServer.stop() }
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let config = """
            [Connectivity]
            URL=http://10.77.0.1:8080/generate_204
            Interval=600
            StandbyInterval=600
            Timeout=2
            [Cellular]
            ModemManager=no
            """
        let daemon = try DaemonUnderTest(namespace: host, config: config, environment: [systemBusVariable: bus.address])
        let status = { try WireJSON.decoder().decode(Status.self, from: Data(daemon.reachctl(["status", "--json"]).stdout.utf8)) }
        let standbyFull = { (try? status())?.interfaces.first { $0.name == "eth1" }?.connectivity == .full }
        #expect(waitUntil(timeout: 15) { (try? status())?.connectivity == .full && standbyFull() }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")
        let monitor = try EventTruthTests.Monitor(daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))

        for cycle in 1...4 {
            let before = monitor.events.count
            try logind.prepareForSleep(true)
            #expect(waitUntil(timeout: 10) { monitor.events.dropFirst(before).contains { $0.reason.code == .sleeping } },
                    "cycle \(cycle): \(daemon.child.stderr)")
            #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == [] }, "cycle \(cycle)")
            try logind.prepareForSleep(false)
            #expect(waitUntil(timeout: 15) {
                let after = monitor.events.dropFirst(before)
                return after.contains { $0.reason.code == .resumed }
                    && after.last?.current.interfaces.first { $0.name == "eth1" }?.connectivity == .full
            }, "cycle \(cycle): \(monitor.events.dropFirst(before).map { "\($0.reason.code)/\($0.reason.interface ?? "-")" })")
            #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "cycle \(cycle)")
            let events = Array(monitor.events.dropFirst(before))
            let codes = events.map { "\($0.reason.code.rawValue)/\($0.reason.interface ?? "-")" }
            #expect(events.filter { $0.reason.code == .sleeping }.count == 1, "cycle \(cycle): \(codes)")
            let sleeping = try #require(events.first)
            #expect(sleeping.reason.code == .sleeping && sleeping.current.connectivity == .unknown, "cycle \(cycle): \(codes)")
            #expect(sleeping.current.interfaces.allSatisfy { $0.connectivity == nil }, "cycle \(cycle)")
            let resumed = events.filter { $0.reason.code == .resumed }
            #expect(resumed.count == 1, "cycle \(cycle): \(codes)")
            #expect(resumed.first?.current.connectivity == .full, "cycle \(cycle): \(codes)")
            #expect(events.contains { $0.reason.code == .probeResult && $0.reason.interface == "eth1" }, "cycle \(cycle): \(codes)")
            // Nothing but the checks after the wake brought connectivity back.
            #expect(events.filter { $0.current.connectivity == .full }.allSatisfy { $0.sequence >= (resumed.first?.sequence ?? 0) },
                    "cycle \(cycle): \(codes)")
        }
        EventTruthTests.checkFullStream(monitor.events, "everyWakeIsResumedWithAStandbyUplink")
    }

    /// logind announces a sleep and never ends it (a failed suspend, a lost signal): after
    /// `SleepLimit=` (shortened to 2 s here) of monotonic time reachd takes it as a wake, says so,
    /// checks afresh (the server sees the check, connectivity comes back with reason `resumed`)
    /// and takes the inhibitor again; later events still flow.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func aSleepThatNeverEndsEndsAfterTheLimit() throws {
        let host = try TestNamespace(tag: "sn"), uplink = try TestNamespace(tag: "snu")
        defer { host.destroy(); uplink.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: uplink)
        let server = try ProbeServer(in: uplink, mode: .noContent)
        defer { server.stop() }
        let bus = try PrivateBus()
        let logind = try LogindMock(bus: bus)
        let config = """
            [Monitor]
            SleepLimit=2s
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
        let monitor = try EventTruthTests.Monitor(daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        let checks = server.requests.count

        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { monitor.events.contains { $0.reason.code == .sleeping } }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 15) { monitor.events.contains { $0.reason.code == .resumed } }, "\(daemon.child.stderr)")
        let resumed = try #require(monitor.events.last { $0.reason.code == .resumed })
        #expect(resumed.current.connectivity == .full)
        #expect(server.requests.count > checks)
        #expect(daemon.child.stderr.contains("taking it as a wake"), "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")

        // Events flow: a carrier loss on the uplink is the next event.
        let before = monitor.events.count
        try uplink.ip("link set up0 down")
        #expect(waitUntil(timeout: 10) { monitor.events.count > before }, "\(daemon.child.stderr)")
        #expect(monitor.events.dropFirst(before).first?.current.connectivity != .full)
        // logind's late `false` changes nothing.
        let settled = monitor.events.count
        try logind.prepareForSleep(false)
        #expect(try daemon.reachctl(["status"]).status == 0)
        #expect(!monitor.events.dropFirst(settled).contains { $0.reason.code == .resumed })
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
