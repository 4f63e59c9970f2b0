import Foundation
import ReachabilityCore
import Testing
import TestSupport

extension SystemTests {
/// The system bus dies under a running reachd and comes back on the same address, with
/// ModemManager, NetworkManager and logind (python-dbusmock) started again on it: reachd says so,
/// the metrics show it, and it follows all three again.
@Suite struct SystemBusIntegrationTests {
    private static func status(_ daemon: DaemonUnderTest) -> Status? {
        guard let out = try? daemon.reachctl(["status", "--json"]), out.status == 0 else { return nil }
        return try? WireJSON.decoder().decode(Status.self, from: Data(out.stdout.utf8))
    }

    /// NetworkManager's device for `eth1`, with its `Metered` (3 guess-yes, 4 guess-no).
    private static func startNetworkManager(on bus: PrivateBus, metered: Int) throws -> Child {
        let process = try bus.startMock(template: "networkmanager", owning: "org.freedesktop.NetworkManager")
        try busctl(bus, "/org/freedesktop/NetworkManager org.freedesktop.DBus.Mock AddEthernetDevice ssi mock_eth1 eth1 100")
        try busctl(bus, "\(device) org.freedesktop.DBus.Mock AddProperty ssv org.freedesktop.NetworkManager.Device Metered u \(metered)")
        // AddProperty says nothing on the bus; a follower that read the device before it hears this.
        try setMetered(bus, metered)
        return process
    }

    private static let device = "/org/freedesktop/NetworkManager/Devices/mock_eth1"

    private static func setMetered(_ bus: PrivateBus, _ value: Int) throws {
        try busctl(bus, "\(device) org.freedesktop.DBus.Mock UpdateProperties 'sa{sv}' org.freedesktop.NetworkManager.Device 1 Metered u \(value)")
    }

    private static func busctl(_ bus: PrivateBus, _ arguments: String) throws {
        let result = try sh("busctl --address='\(bus.address)' call org.freedesktop.NetworkManager \(arguments)", check: false)
        if result.status != 0 { throw SetupError(description: "busctl \(arguments): \(result.output)") }
    }

    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock))
    func reachdFollowsEveryServiceAgainAfterTheBusRestarts() throws {
        let host = try TestNamespace(tag: "sb"), cellular = try TestNamespace(tag: "sbc"), wired = try TestNamespace(tag: "sbw")
        defer { host.destroy(); cellular.destroy(); wired.destroy() }
        try host.exec("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        _ = try VethUplink(host: host, uplink: cellular, inner: "mm0", outer: "up0", subnet: 91, metric: 100)
        _ = try VethUplink(host: host, uplink: wired, inner: "eth1", outer: "up1", subnet: 92, metric: 200)
        let bus = try PrivateBus()
        defer { bus.stop() }
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)
        var networkManager = try Self.startNetworkManager(on: bus, metered: 4)
        defer { networkManager.killAndWait() }
        var logind = try LogindMock(bus: bus)
        // wpa_supplicant says eth1 is a Wi-Fi device associated with "lab".
        let wpa = try WiFiOwnerMock(.wpaSupplicant, bus: bus)
        func associate() throws {
            try wpa.control("AddInterface", "0", "eth1")
            try wpa.control("AddBSS", "0", "1", "lab", "02:11:22:33:44:55", "2437", "-60")
            try wpa.control("Associate", "0", "1", "144")
        }
        try associate()

        let metricsDirectory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: metricsDirectory) }
        let config = """
            [Connectivity]
            Enabled=no
            [Cellular]
            ModemManager=yes
            [Interfaces]
            NetworkManager=yes
            LeaseDirectory=/nonexistent/reachd-test-leases
            [Metrics]
            TextfileDirectory=\(metricsDirectory)
            """
        let daemon = try DaemonUnderTest(namespace: host, config: config, environment: [systemBusVariable: bus.address])
        defer { daemon.stop() }
        let gauge = { (try? String(contentsOfFile: metricsDirectory + "/reachd.prom", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("reachd_system_bus_connected ") }.map(String.init) }
        let eth1Metered = { Self.status(daemon)?.interfaces.first { $0.name == "eth1" }?.metered }
        let eth1WiFi = { Self.status(daemon)?.interfaces.first { $0.name == "eth1" }?.wifi?.ssid }
        #expect(waitUntil(timeout: 10) { eth1WiFi() == "lab" }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.status == .wwan4G && eth1Metered() == false }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { gauge() == "reachd_system_bus_connected 1" }, "\(String(describing: gauge()))")

        // The bus dies: said once, the gauge drops, and what the services said is void (the
        // modem goes with ModemManager's word).
        bus.kill()
        mm.kill()
        networkManager.killAndWait()
        logind.kill()
        wpa.kill()
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("lost the D-Bus connection") }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { eth1WiFi() == nil }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { gauge() == "reachd_system_bus_connected 0" }, "\(String(describing: gauge()))")
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.status == .ethernet }, "\(daemon.child.stderr)")

        // Back on the same address, the services with it: each is read afresh and followed.
        try bus.restart()
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("dbus: the system bus is back") }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { gauge() == "reachd_system_bus_connected 1" }, "\(String(describing: gauge()))")
        try mm.start()
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)
        networkManager = try Self.startNetworkManager(on: bus, metered: 3)
        logind = try LogindMock(bus: bus)
        try wpa.start()
        try associate()
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.status == .wwan4G }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { eth1WiFi() == "lab" }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { eth1Metered() == true }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")

        // Changes after the return: a modem change, a Metered change, a sleep.
        let monitor = try EventTruthTests.Monitor(daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))
        try mm.setAccessTechnologies(0, ModemAccessTechnology.fiveGNR.rawValue)
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.status == .wwan5G }, "\(daemon.child.stderr)")
        try Self.setMetered(bus, 4)
        #expect(waitUntil(timeout: 10) { eth1Metered() == false }, "\(daemon.child.stderr)")
        // Sleep and wake (with the check off, connectivity stays unknown: no event, but the log
        // and the inhibitor, released only once the status is out, tell).
        try logind.prepareForSleep(true)
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("sleep: the machine is going to sleep") }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == [] }, "\(daemon.child.stderr)")
        try logind.prepareForSleep(false)
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("sleep: the machine woke") }, "\(daemon.child.stderr)")
        #expect(waitUntil(timeout: 10) { (try? logind.inhibitors()) == ["sleep reachd delay"] }, "\(daemon.child.stderr)")
        #expect(monitor.events.contains { $0.reason.code == .modemChanged && $0.current.status == .wwan5G }, "\(monitor.events.map(\.reason))")
        // One line each way.
        #expect(daemon.child.stderr.components(separatedBy: "lost the D-Bus connection").count == 2, "\(daemon.child.stderr)")
        #expect(daemon.child.stderr.components(separatedBy: "dbus: the system bus is back").count == 2, "\(daemon.child.stderr)")
    }
}
}
