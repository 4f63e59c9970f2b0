import Foundation
import ReachabilitySystem
import Testing
import ReachabilityCore
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension SystemTests {
/// The cost of the path end to end: reachd in a namespace reads systemd-networkd's lease of its
/// uplink from the configured directory, and the configuration overrides what it says.
@Suite struct CostIntegrationTests {
    private static func status(_ daemon: DaemonUnderTest) -> Status? {
        guard let out = try? daemon.reachctl(["status", "--json"]), out.status == 0 else { return nil }
        return try? WireJSON.decoder().decode(Status.self, from: Data(out.stdout.utf8))
    }

    /// networkd's way: a temporary file renamed over the lease (inotify sees IN_MOVED_TO).
    private static func writeLease(_ text: String, directory: String, index: Int) throws {
        let temporary = "\(directory)/.#\(index)tmp"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, "\(directory)/\(index)") == 0 else {
            throw Errno.current("rename", path: "\(directory)/\(index)")
        }
    }

    private static let meteredHex = Array("ANDROID_METERED".utf8).map { String(format: "%02x", $0) }.joined()

    @Test(.needsRoot())
    func aHotspotsLeaseMakesThePathExpensiveUnlessConfiguredNotMetered() throws {
        let host = try TestNamespace(tag: "co"), uplink = try TestNamespace(tag: "cou")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let index = try #require(Int(try host.exec("cat /sys/class/net/eth0/ifindex").trimmingCharacters(in: .whitespacesAndNewlines)))
        let leases = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: leases) }
        // The key=value form of systemd 252, as a phone's hotspot leases it.
        try Self.writeLease("""
            # This is private data. Do not parse.
            ADDRESS=10.77.0.2
            NETMASK=255.255.255.0
            ROUTER=10.77.0.1
            SERVER_ADDRESS=10.77.0.1
            VENDOR_SPECIFIC=\(Self.meteredHex)

            """, directory: leases, index: index)

        let config = DaemonUnderTest.defaultConfig + "[Interfaces]\nLeaseDirectory=\(leases)\nConstrained=eth*\n"
        let daemon = try DaemonUnderTest(namespace: host, config: config)
        defer { daemon.stop() }

        #expect(waitUntil(timeout: 10) { Self.status(daemon).map { $0.expensive && $0.constrained } == true },
                "\(String(describing: Self.status(daemon))) \(daemon.child.stderr)")
        let primary = Self.status(daemon)?.primary
        #expect(primary?.name == "eth0" && primary?.metered == true)

        // The JSON form of newer networkd, without the hint: no longer expensive (the file's change alone tells).
        try Self.writeLease(#"{"Address":[10,77,0,2],"Router":[[10,77,0,1]],"Netmask":[255,255,255,0],"Server_Address":[10,77,0,1]}"#,
                            directory: leases, index: index)
        #expect(waitUntil(timeout: 10) { Self.status(daemon).map { !$0.expensive && $0.constrained } == true },
                "\(String(describing: Self.status(daemon))) \(daemon.child.stderr)")
        #expect(daemon.child.stderr.contains("DHCP lease no longer asks for metered use"), "\(daemon.child.stderr)")

        // With the hint again, in JSON.
        try Self.writeLease(#"{"Address":[10,77,0,2],"Vendor_Specific":"\#(Self.meteredHex)"}"#, directory: leases, index: index)
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == true }, "\(daemon.child.stderr)")

        // A broken lease changes nothing and is said once.
        try Self.writeLease(#"{"Vendor_Specific":"41"#, directory: leases, index: index)
        try Self.writeLease(#"{"Vendor_Specific":"41"#, directory: leases, index: index)
        #expect(waitUntil(timeout: 10) { daemon.child.stderr.contains("DHCP lease \(leases)/\(index): not valid JSON") },
                "\(daemon.child.stderr)")
        #expect(daemon.child.stderr.components(separatedBy: "\n").filter { $0.contains("not valid JSON") }.count == 1,
                "\(daemon.child.stderr)")
        #expect(Self.status(daemon)?.expensive == true)

        // The user knows better: NotMetered= overrides the hint on reload; Constrained= cleared.
        try daemon.writeConfig(DaemonUnderTest.defaultConfig + "[Interfaces]\nLeaseDirectory=\(leases)\nNotMetered=eth0\n")
        daemon.reload()
        #expect(waitUntil(timeout: 10) { Self.status(daemon).map { !$0.expensive && !$0.constrained } == true },
                "\(String(describing: Self.status(daemon))) \(daemon.child.stderr)")
        #expect(Self.status(daemon)?.primary?.metered == false)
    }

    /// Whoever can rewrite a lease flips ANDROID_METERED 100 times a second for 3 s: a subscriber
    /// sees at most one costChanged a second (the first at once, the newest at each second's
    /// end), the final value is right, and the log has a line for the first flip, not 300.
    @Test(.needsRoot())
    func leaseFlipsAreMergedToOneEventASecond() throws {
        let host = try TestNamespace(tag: "cf"), uplink = try TestNamespace(tag: "cfu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let index = try #require(Int(try host.exec("cat /sys/class/net/eth0/ifindex").trimmingCharacters(in: .whitespacesAndNewlines)))
        let leases = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: leases) }
        let plain = #"{"Address":[10,77,0,2],"Router":[[10,77,0,1]]}"#
        let metered = #"{"Address":[10,77,0,2],"Router":[[10,77,0,1]],"Vendor_Specific":"\#(Self.meteredHex)"}"#
        try Self.writeLease(plain, directory: leases, index: index)
        let daemon = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig + "[Interfaces]\nLeaseDirectory=\(leases)\n")
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 10) { Self.status(daemon).map { $0.primary?.name == "eth0" && !$0.expensive } == true },
                "\(daemon.child.stderr)")
        let monitor = try EventTruthTests.Monitor(daemon)
        defer { monitor.stop() }
        #expect(monitor.await(1))

        // On a loaded machine the 300 writes take longer than 3 s; the bound below is per second
        // the flipping really lasted.
        let flipping = ContinuousClock.now
        for flip in 1...300 {
            try Self.writeLease(flip % 2 == 1 ? metered : plain, directory: leases, index: index)
            usleep(10_000)
        }
        // The last write says metered (flip 299 is odd, 300 even: end on metered).
        try Self.writeLease(metered, directory: leases, index: index)
        let flipSeconds = (ContinuousClock.now - flipping).components.seconds
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == true }, "\(daemon.child.stderr)")
        // The marker: a carrier loss after the merger's last second is the next event.
        usleep(1_500_000)
        try uplink.ip("link set up0 down")
        #expect(waitUntil(timeout: 10) { monitor.events.contains { $0.reason.code == .carrierLost } }, "\(daemon.child.stderr)")

        let costEvents = monitor.events.filter { $0.reason.code == .costChanged }
        let shown = costEvents.map { "#\($0.sequence) \($0.current.expensive) \($0.timestamp.timeIntervalSince1970)" }
        // One at once, then at most one at the end of each second begun (the last write included).
        #expect(!costEvents.isEmpty && costEvents.count <= Int(flipSeconds) + 2, "\(flipSeconds) s: \(shown)")
        // The daemon's own clock: never two within a second (a little slack for the timestamp
        // being taken after the merger's reading).
        for (a, b) in zip(costEvents, costEvents.dropFirst()) {
            #expect(b.timestamp.timeIntervalSince(a.timestamp) >= 0.9, "\(shown)")
        }
        #expect(costEvents.last?.current.expensive == true)
        for (a, b) in zip(costEvents, costEvents.dropFirst()) { #expect(a.current.expensive != b.current.expensive) }
        let lines = daemon.child.stderr.components(separatedBy: "\n").filter { $0.contains("eth0: DHCP lease") }
        #expect(lines.count <= 3, "\(lines)")
    }

    /// NetworkManager (python-dbusmock's template on a private bus) says the uplink's device is
    /// metered by its guess (guess-yes, 3): expensive; guess-no (4): not; gone: not.
    @Test(.needsRoot(), .requires(.dbusMock, .busctl))
    func networkManagersMeteredGuessMakesThePathExpensive() throws {
        let host = try TestNamespace(tag: "cn"), uplink = try TestNamespace(tag: "cnu")
        defer { host.destroy(); uplink.destroy() }
        _ = try VethUplink(host: host, uplink: uplink)
        let bus = try PrivateBus()
        defer { bus.stop() }
        let networkManager = try bus.startMock(template: "networkmanager", owning: "org.freedesktop.NetworkManager")
        defer { networkManager.killAndWait() }
        func busctl(_ arguments: String) throws {
            let result = try sh("busctl --address='\(bus.address)' call org.freedesktop.NetworkManager \(arguments)", check: false)
            if result.status != 0 { throw SetupError(description: "busctl \(arguments): \(result.output)") }
        }
        let device = "/org/freedesktop/NetworkManager/Devices/mock_eth0"
        func setMetered(_ value: Int) throws {
            try busctl("\(device) org.freedesktop.DBus.Mock UpdateProperties 'sa{sv}' org.freedesktop.NetworkManager.Device 1 Metered u \(value)")
        }
        try busctl("/org/freedesktop/NetworkManager org.freedesktop.DBus.Mock AddEthernetDevice ssi mock_eth0 eth0 100")
        // The template's devices have no Metered: NetworkManager's own guess for a hotspot's lease.
        try busctl("\(device) org.freedesktop.DBus.Mock AddProperty ssv org.freedesktop.NetworkManager.Device Metered u 3")

        let daemon = try DaemonUnderTest(namespace: host, config: DaemonUnderTest.defaultConfig + "[Interfaces]\nNetworkManager=yes\n",
                                         environment: [systemBusVariable: bus.address])
        defer { daemon.stop() }
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == true }, "\(daemon.child.stderr)")
        try setMetered(4)
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == false }, "\(daemon.child.stderr)")
        try setMetered(1)
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == true }, "\(daemon.child.stderr)")
        // NetworkManager leaves the bus: its guess goes with it.
        networkManager.killAndWait()
        #expect(waitUntil(timeout: 10) { Self.status(daemon)?.expensive == false }, "\(daemon.child.stderr)")
    }
}
}
