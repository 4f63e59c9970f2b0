import Foundation
import Testing
import ReachabilityClient
import ReachabilityCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// The reachd binary, as an unprivileged user, against what a hostile peer and systemd's
/// watchdog see of it.
@Suite struct HostilePeerEndToEndTests {
    /// A peer on the (private) system bus forges ModemManager's disappearance; the daemon, as
    /// `nobody`, keeps the modem, sends no event, and still follows the real ModemManager.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func forgedNameOwnerChangedChangesNothingInTheDaemon() async throws {
        let host = try TestNamespace(tag: "fn"), network = try TestNamespace(tag: "fnu")
        defer { host.destroy(); network.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: network, inner: "mm0", outer: "up0", subnet: 91)
        let bus = try PrivateBus(everyUser: true)
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)

        let daemon = try DaemonUnderTest.unprivileged(namespace: host, config: "[Connectivity]\nEnabled=no\n[Cellular]\nModemManager=yes\n",
                                                      environment: [systemBusVariable: bus.address])
        defer { daemon.stop() }
        let credentials = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        #expect(credentials.contains("\nUid:\t65534\t"), "\(credentials)")
        #expect(try await ReachabilityClient(socketPath: daemon.socketPath).status().status == .wwan4G, "\(daemon.child.stderr)")

        let client = ReachabilityClient(socketPath: daemon.socketPath)
        let events = Recorder<ReachabilityEvent>()
        let task = Task { for try await event in client.events(statusOnly: true) { events.append(event) } }
        defer { task.cancel() }
        // The subscription's first event is the current state.
        #expect(await eventually(timeout: 15) { events.count >= 1 }, "\(daemon.child.stderr)")
        #expect(events.all.map(\.current.status) == [.wwan4G])

        let sent = try sh("\(Binaries.python) \(Paths.packageRoot)/Tests/python/forge_signal.py '\(bus.address)' modemmanager-vanished")
        // Broadcast and addressed to each other connection, the daemon's among them.
        #expect((Int(sent.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 2, "\(sent.output)")
        #expect(await eventually(timeout: 15) { daemon.child.stderr.contains("ignoring NameOwnerChanged from :") }, "\(daemon.child.stderr)")
        #expect(try await client.status().status == .wwan4G)

        // The marker: the real ModemManager's next change is the one event after the first.
        try mm.setAccessTechnologies(0, ModemAccessTechnology([.lte, .fiveGNR]).rawValue)
        #expect(await eventually(timeout: 15) { events.count >= 2 }, "\(daemon.child.stderr)")
        #expect(events.all.map(\.current.status) == [.wwan4G, .wwan5G], "\(events.all.map(\.current.status)) \(daemon.child.stderr)")
        #expect(events.all.last?.reason.code == .modemChanged)
        #expect(try await client.status().status == .wwan5G)
        #expect(daemon.child.isRunning)
    }

    /// Under `WatchdogSec=` the daemon binary pings `WATCHDOG=1` to the notify socket, again and
    /// again. (That the pings stop when the monitor's queue wedges is shown on the notifier: the
    /// daemon has no hook to wedge its own queue, and SIGSTOP would stop every thread.)
    @Test(.needsRoot())
    func daemonPingsTheWatchdog() throws {
        let host = try TestNamespace(tag: "wd"), uplink = try TestNamespace(tag: "wdu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        // WATCHDOG_PID is left out (a daemon not told whose pings they are sends them); `ip netns
        // exec` and env both exec, so reachd's pid would be the child's.
        let reachd = try DaemonUnderTest(namespace: host, launch: .init(notify: true, variables: ["WATCHDOG_USEC=300000"]))
        defer { reachd.stop() }
        let listener = try #require(reachd.notifications), daemon = reachd.child, socketPath = reachd.socketPath
        #expect(waitUntil(timeout: 15) { listener.lines.contains { $0.contains("READY=1") } }, "\(listener.lines) \(daemon.stderr)")
        let pings = { listener.lines.filter { $0 == "WATCHDOG=1" }.count }
        #expect(waitUntil(timeout: 15) { pings() >= 5 }, "\(listener.lines) \(daemon.stderr)")
        // Still pinging while it serves clients.
        let before = pings()
        #expect(try run(Binaries.reachctl, ["status", "--socket", socketPath]).status == 0)
        #expect(waitUntil(timeout: 15) { pings() >= before + 3 }, "\(listener.lines) \(daemon.stderr)")
        #expect(daemon.stderr.contains("watchdog every"), "\(daemon.stderr)")
        #expect(daemon.isRunning)
    }
}
}
