import Foundation
import ReachabilityCore
import ReachabilityLinux
import TestSupport
import Testing

extension SystemTests {
/// The ModemManager source feeding the real monitor, whose modem's net port is a veth with the
/// default route in a test namespace: cellular generations, modem removal, ModemManager crashes.
@Suite(.serialized) struct ModemManagerMonitorTests {
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock)) func vethNetPortOfAModemIsCellular() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network, inner: "mm0", outer: "up0", subnet: 79)
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)

        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        #expect(monitor.status.status == .ethernet)
        let recorder = EventRecorder(monitor)
        let source = ModemManagerSource(monitor: monitor, busAddress: bus.address)
        source.start()
        defer { source.stop() }

        // LTE → wwan4G.
        #expect(waitUntil(timeout: 10) { monitor.status.status == .wwan4G })
        var status = monitor.status
        #expect(status.primary?.name == "mm0")
        #expect(status.primary?.kind == .wwan)
        #expect(status.expensive)
        #expect(status.flags.contains(.isWWAN))
        #expect(status.cellular == Cellular(generation: "4G", accessTechnology: "lte",
                                            modem: "/org/freedesktop/ModemManager1/Modem/0", interface: "mm0",
                                            signalQuality: 71, roaming: false))
        #expect(recorder.first { $0.status == .wwan4G }?.reason.code == .modemChanged)

        // 5G NSA → wwan5G, one event, reason modemChanged.
        var seen = recorder.events.count
        try mm.setAccessTechnologies(0, ModemAccessTechnology([.lte, .fiveGNR]).rawValue)
        #expect(waitUntil(timeout: 10) { monitor.status.status == .wwan5G })
        let fiveG = recorder.first(after: seen) { $0.status == .wwan5G }
        #expect(fiveG?.reason.code == .modemChanged)
        #expect(fiveG?.previous?.status == .wwan4G)
        #expect(fiveG?.current.cellular?.accessTechnology == "5gnr")

        // EDGE → wwan2G, accessTechnology edge.
        seen = recorder.events.count
        try mm.setAccessTechnologies(0, ModemAccessTechnology([.gsm, .gprs, .edge]).rawValue)
        #expect(waitUntil(timeout: 10) { monitor.status.status == .wwan2G })
        #expect(monitor.status.cellular?.accessTechnology == "edge")
        #expect(monitor.status.cellular?.generation == "2G")
        #expect(recorder.first(after: seen) { $0.status == .wwan2G }?.reason.code == .modemChanged)

        // Roaming and signal are reported too (a change of the status object: an event).
        seen = recorder.events.count
        try mm.control("SetRegistrationState", "0", "5")
        #expect(waitUntil(timeout: 10) { monitor.status.cellular?.roaming == true })
        #expect(recorder.first(after: seen) { $0.cellular?.roaming == true }?.reason.code == .modemChanged)

        // ModemManager crashes: the veth is plain ethernet again, nothing stale remains.
        seen = recorder.events.count
        mm.kill()
        #expect(waitUntil(timeout: 10) { monitor.status.status == .ethernet })
        status = monitor.status
        #expect(status.cellular == nil)
        #expect(status.primary?.kind == .ethernet)
        #expect(!status.expensive)
        #expect(recorder.first(after: seen) { $0.status == .ethernet }?.reason.code == .modemChanged)

        // It comes back (its modems re-read): cellular again.
        try mm.start()
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.umts.rawValue)
        #expect(waitUntil(timeout: 10) { monitor.status.status == .wwan3G })
        #expect(monitor.status.cellular?.roaming == false)

        // The modem is removed: the interface falls back to its sysfs kind.
        seen = recorder.events.count
        try mm.control("RemoveModem", "0")
        #expect(waitUntil(timeout: 10) { monitor.status.status == .ethernet })
        #expect(monitor.status.cellular == nil)
        #expect(recorder.first(after: seen) { $0.status == .ethernet }?.reason.code == .modemChanged)

        #expect(recorder.duplicates.isEmpty)
        #expect(recorder.isChained)
    }

    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock)) func modemOnAnotherInterfaceDoesNotChangeTheStatus() throws {
        let host = try TestNamespace(tag: "h"), network = try TestNamespace(tag: "n")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        _ = try VethUplink(host: host, uplink: network, inner: "eth0", outer: "up0", subnet: 80, metric: 100)
        _ = try VethUplink(host: host, uplink: network, inner: "mm0", outer: "up1", subnet: 81, metric: 700)
        let bus = try PrivateBus()
        let mm = try ModemManagerMock(bus: bus)
        try mm.addModem(0, netPort: "mm0", access: ModemAccessTechnology.lte.rawValue)

        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        let source = ModemManagerSource(monitor: monitor, busAddress: bus.address)
        // As the daemon starts it: the status knows the modem when start returns.
        #expect(source.start(waitingUpTo: 10))
        defer { source.stop() }

        // The modem's interface is wwan in the list, but the primary stays the cheaper ethernet.
        #expect(monitor.status.interfaces.first { $0.name == "mm0" }?.kind == .wwan)
        #expect(monitor.status.status == .ethernet)
        #expect(monitor.status.cellular == nil)
        #expect(!monitor.status.expensive)

        // Ethernet goes: the modem takes over as wwan4G.
        try host.ip("link set eth0 down")
        #expect(waitUntil(timeout: 10) { monitor.status.status == .wwan4G })
        #expect(monitor.status.primary?.name == "mm0")

        // The source is stopped (SIGHUP with `[Cellular] ModemManager=no`): the modem is forgotten.
        source.stop()
        #expect(monitor.status.status == .ethernet)
        #expect(monitor.status.primary?.name == "mm0")
        #expect(monitor.status.cellular == nil)
    }
}
}
