import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// reachd as built, with iwd played on a private system bus and a veth named `wlan0` standing for
/// the Wi-Fi device: what `reachctl status`, `--verbose` and `--json` show, a roam as
/// `reachctl monitor` prints it, and iwd leaving.
@Suite(.serialized) struct WiFiIntegrationTests {
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func reachctlShowsTheNetworkBandAndBarsAndOneRoam() throws {
        let host = try TestNamespace(tag: "wi"), uplink = try TestNamespace(tag: "wiu")
        defer { host.destroy(); uplink.destroy() }
        let veth = try VethUplink(host: host, uplink: uplink, inner: "wlan0", subnet: 83)
        // Its IPv6 link-local address settled first: its arrival would be an event of its own.
        _ = try veth.settledLinkLocal()
        let bus = try PrivateBus()
        defer { bus.stop() }
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "cafe", "02:11:22:33:44:55", "5180", "-61")

        let daemon = try DaemonUnderTest(namespace: host, environment: [systemBusVariable: bus.address])
        defer { daemon.stop() }
        var line = ""
        let shown = waitUntil(timeout: 10) {
            line = (try? daemon.reachctl(["status"]).stdout) ?? ""
            return line.contains("3 bars")
        }
        #expect(shown, "\(line) \(daemon.child.stderr)")
        #expect(line.hasPrefix(#"online · wifi (wlan0, "cafe", 5 GHz, 3 bars) · internet: not checked · IPv4"#), "\(line)")
        let verbose = try daemon.reachctl(["status", "--verbose"]).stdout
        #expect(verbose.contains(#"wifi "cafe" · 02:11:22:33:44:55 · 5180 MHz (5 GHz) · -61 dBm · "#)
                && verbose.contains(" · 3 bars · 866.7 Mbit/s · from iwd"), "\(verbose)")
        let json = try daemon.reachctl(["status", "--json"]).stdout
        let status = try WireJSON.decoder().decode(Status.self, from: Data(json.utf8))
        #expect(status.status == .wifi && status.primary?.kind == .wifi)
        #expect(status.primary?.wifi?.bssid == "02:11:22:33:44:55" && status.primary?.wifi?.owner == .iwd)

        // A roam: one line of `reachctl monitor`, reason roamed, still online.
        let monitor = try Child(Binaries.reachctl, ["monitor", "--socket", daemon.socketPath])
        defer { monitor.signal(SIGTERM); monitor.wait() }
        #expect(waitUntil(timeout: 10) { monitor.lines.count >= 1 }, "\(monitor.lines)")
        try iwd.control("Roam", "1", "02:11:22:33:44:66", "5200", "-63")
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains(" roamed wlan0 [interfaces,primary]: online · wifi (wlan0, \"cafe\", 5 GHz, 3 bars)") } },
                "\(monitor.lines)")
        Thread.sleep(forTimeInterval: 1)
        #expect(monitor.lines.count == 2, "\(monitor.lines)")

        // iwd leaves: the device is what sysfs says again (a veth: ethernet), one event.
        iwd.kill()
        #expect(waitUntil(timeout: 10) { monitor.lines.contains { $0.contains(" wifiChanged wlan0 ") && $0.contains("ethernet (wlan0)") } },
                "\(monitor.lines)")
    }
}
}
