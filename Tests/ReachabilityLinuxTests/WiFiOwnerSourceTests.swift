import Foundation
import Synchronization
import ReachabilityCore
import ReachabilityLinux
import TestSupport
import Testing

/// `WiFiOwnerSource` against the owners played on a private dbus-daemon: our iwd and
/// wpa_supplicant templates and python-dbusmock's NetworkManager one. Connect, signal, roam,
/// owner restart, owner absent, two owners claiming one device; then the real monitor over a
/// veth named like a Wi-Fi device.
extension SystemTests {
@Suite(.serialized) struct WiFiOwnerSourceTests {
    /// What the source reported last, for the test's thread.
    final class Reported: @unchecked Sendable {
        private let lock = NSLock()
        private var devices: [WiFiDevice] = []
        private var all: [[WiFiDevice]] = []
        private(set) var reports = 0
        var last: [WiFiDevice] { lock.withLock { devices } }
        /// Every report, in order.
        var history: [[WiFiDevice]] { lock.withLock { all } }
        func take(_ new: [WiFiDevice]) { lock.withLock { devices = new; all.append(new); reports += 1 } }
        func station(_ name: String = "wlan0") -> WiFiStation? { last.first { $0.interface == name }?.station }
        func device(_ name: String = "wlan0") -> WiFiDevice? { last.first { $0.interface == name } }
    }

    static func source(_ bus: PrivateBus, _ reported: Reported) -> WiFiOwnerSource {
        WiFiOwnerSource(queue: DispatchQueue(label: "test.wifi"), busAddress: bus.address, pollInterval: 0.2) { reported.take($0) }
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func iwdConnectSignalRoamAndRestart() throws {
        let bus = try PrivateBus()
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        let reported = Reported()
        let source = Self.source(bus, reported)
        source.start()
        defer { source.stop() }
        #expect(waitUntil(timeout: 10) { reported.device()?.state == .disconnected }, "\(reported.last)")
        #expect(reported.device()?.owner == .iwd && reported.station() == nil)

        try iwd.control("Connect", "1", "cafe", "02:11:22:33:44:55", "5180", "-61")
        #expect(waitUntil(timeout: 10) { reported.station()?.signalDbm == -61 }, "\(reported.last)")
        let station = try #require(reported.station())
        #expect(station.ssid == WiFiSSID("cafe") && station.bssid == WiFiBSSID("02:11:22:33:44:55"))
        #expect(station.frequencyMHz == 5180 && station.band == .band5GHz && station.bars == 3 && station.txBitrateKbps == 866_700)

        // iwd publishes the signal through no property: the source reads it while connected.
        try iwd.control("SetSignal", "1", "-85")
        #expect(waitUntil(timeout: 10) { reported.station()?.bars == 1 }, "\(reported.last)")

        // A roam: the new access point comes with its own figures, in one report.
        let before = reported.reports
        try iwd.control("Roam", "1", "02:11:22:33:44:66", "2437", "-50")
        #expect(waitUntil(timeout: 10) { reported.station()?.bssid == WiFiBSSID("02:11:22:33:44:66") }, "\(reported.last)")
        let roamed = try #require(reported.station())
        #expect(roamed.signalDbm == -50 && roamed.band == .band2_4GHz && roamed.ssid == WiFiSSID("cafe"))
        #expect(reported.reports == before + 1, "a roam reported in steps: \(reported.reports - before)")

        // iwd crashes: its device goes; it comes back: read afresh.
        iwd.kill()
        #expect(waitUntil(timeout: 10) { reported.last.isEmpty }, "\(reported.last)")
        try iwd.start()
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "home", "02:11:22:33:44:77", "5955", "-70")
        #expect(waitUntil(timeout: 10) { reported.station()?.ssid == WiFiSSID("home") && reported.station()?.bars == 2 },
                "\(reported.last)")
        #expect(reported.station()?.band == .band6GHz)
        try iwd.control("Disconnect", "1")
        #expect(waitUntil(timeout: 10) { reported.device()?.state == .disconnected && reported.station() == nil }, "\(reported.last)")
    }

    /// One signal-level agent per station, at the bar edges; iwd's `Changed` (the bars moved) is
    /// what makes the source read the station again: with polling far off, the bars still follow.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func iwdsSignalLevelAgentDrivesTheBars() throws {
        let bus = try PrivateBus()
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "cafe", "02:11:22:33:44:55", "5180", "-61")
        let reported = Reported()
        let source = WiFiOwnerSource(queue: DispatchQueue(label: "test.wifi"), busAddress: bus.address, pollInterval: 3600) {
            reported.take($0)
        }
        source.start()
        #expect(waitUntil(timeout: 10) { reported.station()?.bars == 3 }, "\(reported.last)")
        #expect(waitUntil(timeout: 10) { (try? iwd.control("AgentCalls"))?.first == "Register /io/reachd/SignalLevelAgent -55,-66,-77,-88" })
        for (dbm, bars) in [("-85", 1), ("-50", 4), ("-95", 0)] {
            try iwd.control("SetSignal", "1", dbm)
            #expect(waitUntil(timeout: 10) { reported.station()?.bars == bars }, "\(dbm): \(reported.last)")
        }
        // A signal that stays within its bars calls no agent, and with polling far off nothing moves.
        try iwd.control("SetSignal", "1", "-97")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(reported.station()?.signalDbm == -95)
        let calls = try iwd.control("AgentCalls")
        #expect(calls.filter { $0.hasPrefix("Register") }.count == 1, "\(calls)")
        #expect(calls.filter { $0.hasPrefix("Changed /net/connman/iwd/0/1") }.count == 4, "\(calls)")
        // Stopping takes the agent back.
        source.stop()
        #expect(waitUntil(timeout: 10) { (try? iwd.control("AgentCalls"))?.last == "Unregister /io/reachd/SignalLevelAgent" },
                "\((try? iwd.control("AgentCalls")) ?? [])")
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func wpaSupplicantAssociateRoamAndHostileName() throws {
        let bus = try PrivateBus()
        let wpa = try WiFiOwnerMock(.wpaSupplicant, bus: bus)
        let reported = Reported()
        let source = Self.source(bus, reported)
        source.start()
        defer { source.stop() }
        try wpa.control("AddInterface", "0", "wlan0")
        #expect(waitUntil(timeout: 10) { reported.device()?.state == .disconnected }, "\(reported.last)")
        // An SSID with ESC, a bidirectional override and a byte that is no UTF-8.
        try wpa.control("AddBSS", "0", "1", "hex:481b5de280aeff", "02:11:22:33:44:55", "2437", "-70")
        try wpa.control("AddBSS", "0", "2", "hex:481b5de280aeff", "02:11:22:33:44:66", "5180", "-55")
        try wpa.control("Associate", "0", "1", "144")
        #expect(waitUntil(timeout: 10) { reported.station()?.txBitrateKbps == 144_000 }, "\(reported.last)")
        var station = try #require(reported.station())
        #expect(station.owner == .wpaSupplicant && station.ssid?.display == #"H\x1b]\u{202e}\xff"#)
        #expect(station.signalDbm == -70 && station.bars == 2 && station.band == .band2_4GHz)
        // A fast transition: CurrentBSS moves, the state stays completed.
        try wpa.control("Roam", "0", "2", "false")
        #expect(waitUntil(timeout: 10) { reported.station()?.bssid == WiFiBSSID("02:11:22:33:44:66") }, "\(reported.last)")
        station = try #require(reported.station())
        #expect(station.signalDbm == -55 && station.bars == 4 && station.band == .band5GHz)
        // A reassociation (associating, associated, completed): roaming, never without its
        // connection, then on the first access point again.
        let before = reported.reports
        try wpa.control("Roam", "0", "1", "true")
        #expect(waitUntil(timeout: 10) { reported.station()?.bssid == WiFiBSSID("02:11:22:33:44:55") }, "\(reported.last)")
        Thread.sleep(forTimeInterval: 0.5)
        let during = reported.history.dropFirst(before).map { $0.first { $0.interface == "wlan0" } }
        #expect(!during.isEmpty && during.allSatisfy { $0?.station != nil }, "\(during)")
        #expect(during.contains { $0?.state == .roaming }, "\(during)")
        try wpa.control("Roam", "0", "2", "false")
        #expect(waitUntil(timeout: 10) { reported.station()?.bssid == WiFiBSSID("02:11:22:33:44:66") }, "\(reported.last)")
        try wpa.control("SetSignal", "0", "2", "-88")
        #expect(waitUntil(timeout: 10) { reported.station()?.bars == 1 }, "\(reported.last)")
        try wpa.control("Disconnect", "0")
        #expect(waitUntil(timeout: 10) { reported.device()?.state == .disconnected && reported.station() == nil }, "\(reported.last)")
        wpa.kill()
        #expect(waitUntil(timeout: 10) { reported.last.isEmpty }, "\(reported.last)")
    }

    /// NetworkManager's template: a Wi-Fi device with an access point made active.
    static func networkManager(on bus: PrivateBus, state: Int) throws -> (Child, (String) throws -> Void) {
        let child = try bus.startMock(template: "networkmanager", owning: "org.freedesktop.NetworkManager")
        let busctl = { (arguments: String) throws in
            let result = try sh("busctl --address='\(bus.address)' call org.freedesktop.NetworkManager \(arguments)", check: false)
            if result.status != 0 { throw SetupError(description: "busctl \(arguments): \(result.output)") }
        }
        let device = "/org/freedesktop/NetworkManager/Devices/wlan0"
        try busctl("/org/freedesktop/NetworkManager org.freedesktop.DBus.Mock AddWiFiDevice ssi wlan0 wlan0 \(state)")
        try busctl("/org/freedesktop/NetworkManager org.freedesktop.DBus.Mock AddAccessPoint ssssuuuyu \(device) ap1 cafe "
                   + "02:11:22:33:44:55 2 5180 540000 82 0")
        try busctl("\(device) org.freedesktop.DBus.Mock AddProperty ssv org.freedesktop.NetworkManager.Device.Wireless "
                   + "ActiveAccessPoint o /org/freedesktop/NetworkManager/AccessPoint/ap1")
        return (child, busctl)
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func networkManagersWiFiDeviceAndTwoOwners() throws {
        let bus = try PrivateBus()
        let (networkManager, busctl) = try Self.networkManager(on: bus, state: 100)
        defer { networkManager.killAndWait() }
        let reported = Reported()
        let source = Self.source(bus, reported)
        source.start()
        defer { source.stop() }
        #expect(waitUntil(timeout: 10) { reported.station()?.strengthPercent == 82 }, "\(reported.last)")
        let station = try #require(reported.station())
        #expect(station.owner == .networkManager && station.ssid == WiFiSSID("cafe") && station.bssid == WiFiBSSID("02:11:22:33:44:55"))
        #expect(station.band == .band5GHz && station.txBitrateKbps == 5400 && station.signalDbm == nil && station.bars == nil)

        // iwd runs too (NetworkManager's backend): NetworkManager, which manages the device, speaks.
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "cafe", "02:11:22:33:44:55", "5180", "-61")
        Thread.sleep(forTimeInterval: 1)
        #expect(reported.device()?.owner == .networkManager)
        // NetworkManager lets go of the device (unmanaged): iwd speaks, with its dBm and bars.
        let device = "/org/freedesktop/NetworkManager/Devices/wlan0"
        try busctl("\(device) org.freedesktop.DBus.Properties Set ssv org.freedesktop.NetworkManager.Device State u 10")
        #expect(waitUntil(timeout: 10) { reported.device()?.owner == .iwd }, "\(reported.last)")
        #expect(reported.station()?.bars == 3)
        // NetworkManager manages it again and says it is connected: it speaks again.
        try busctl("\(device) org.freedesktop.DBus.Properties Set ssv org.freedesktop.NetworkManager.Device State u 100")
        #expect(waitUntil(timeout: 10) { reported.device()?.owner == .networkManager }, "\(reported.last)")
        // NetworkManager leaves the bus: iwd goes on speaking, with its figures.
        networkManager.killAndWait()
        #expect(waitUntil(timeout: 10) { reported.device()?.owner == .iwd && reported.station()?.bars == 3 }, "\(reported.last)")
    }

    /// The kernel's view (a reader injected in place of nl80211): it completes NetworkManager's
    /// station with the dBm and bars for the same access point only, and speaks alone for a
    /// device no daemon manages.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func theKernelCompletesNetworkManagerAndSpeaksAlone() throws {
        let bus = try PrivateBus()
        let (networkManager, _) = try Self.networkManager(on: bus, state: 100)
        defer { networkManager.killAndWait() }
        let kernel = Mutex<[String: WiFiStation]>([:])
        func station(_ bssid: String, _ dbm: Double, ssid: String = "cafe") -> WiFiStation {
            WiFiStation(owner: .nl80211, ssid: WiFiSSID(ssid), bssid: WiFiBSSID(bssid), frequencyMHz: 5180, signalDbm: dbm,
                        txBitrateKbps: 866_700)
        }
        kernel.withLock { $0 = ["wlan0": station("02:11:22:33:44:55", -85), "wlan9": station("02:aa:bb:cc:dd:ee", -60, ssid: "lab")] }
        let reported = Reported()
        let source = WiFiOwnerSource(queue: DispatchQueue(label: "test.wifi"), busAddress: bus.address, pollInterval: 0.2,
                                     kernel: { .success(kernel.withLock { $0 }) }) { reported.take($0) }
        source.start()
        defer { source.stop() }
        #expect(waitUntil(timeout: 10) { reported.station()?.bars == 1 }, "\(reported.last)")
        let completed = try #require(reported.device())
        // NetworkManager speaks: its own strength and rate stay, the kernel's dBm fills in.
        #expect(completed.owner == .networkManager && completed.station?.strengthPercent == 82)
        #expect(completed.station?.signalDbm == -85 && completed.station?.txBitrateKbps == 5400)
        let alone = try #require(reported.device("wlan9"))
        #expect(alone.owner == .nl80211 && !alone.isManagedAsWiFi && alone.station?.ssid == WiFiSSID("lab") && alone.station?.bars == 3)
        // The kernel read another access point (a roam NetworkManager has not told yet): nothing mixed in.
        kernel.withLock { $0["wlan0"] = station("02:11:22:33:44:66", -50) }
        #expect(waitUntil(timeout: 10) { reported.station()?.signalDbm == nil }, "\(reported.last)")
        #expect(reported.station()?.bssid == WiFiBSSID("02:11:22:33:44:55") && reported.station()?.strengthPercent == 82)
        kernel.withLock { $0 = [:] }
        #expect(waitUntil(timeout: 10) { reported.device("wlan9") == nil }, "\(reported.last)")
    }

    /// nl80211 itself, on this kernel: without cfg80211 the reader says so, and nothing more.
    @Test func theReaderSaysWhenTheKernelHasNoNl80211() throws {
        let reader = NL80211Reader()
        let result = reader.stations()
        if FileManager.default.fileExists(atPath: "/sys/class/ieee80211") {
            // Wi-Fi hardware (or mac80211_hwsim): whatever it reads is keyed by interfaces that exist.
            let stations = try result.get()
            for name in stations.keys { #expect(FileManager.default.fileExists(atPath: "/sys/class/net/\(name)")) }
        } else {
            #expect(result == .failure(.absent), "\(result)")
        }
    }

    /// The monitor over a veth named like a Wi-Fi device: the owner makes it Wi-Fi, a roam is one
    /// event `roamed` with no reachability flap, a weak signal caps the quality.
    @Test(.needsRoot(), .requires(.dbusDaemon, .busctl, .dbusMock)) func theMonitorShowsTheOwnersView() throws {
        let host = try TestNamespace(tag: "wf"), network = try TestNamespace(tag: "wfn")
        defer { host.destroy(); network.destroy() }
        let sysfs = try FakeSysfs()
        let veth = try VethUplink(host: host, uplink: network, inner: "wlan0", outer: "up0", subnet: 81)
        // Its IPv6 link-local address settled first: its arrival would be an event of its own.
        _ = try veth.settledLinkLocal()
        let bus = try PrivateBus()
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "cafe", "02:11:22:33:44:55", "5180", "-61")

        let monitor = ReachabilityMonitor(configuration: monitorConfiguration(host, sysfs: sysfs))
        try monitor.start()
        defer { monitor.stop() }
        #expect(monitor.status.status == .ethernet)
        let recorder = EventRecorder(monitor)
        let source = WiFiOwnerSource(monitor: monitor, busAddress: bus.address, pollInterval: 0.2)
        source.start()
        defer { source.stop() }
        let joined = recorder.first(timeout: 10) { $0.primary?.wifi?.bars == 3 }
        #expect(joined?.current.status == .wifi && joined?.current.primary?.kind == .wifi)
        #expect(joined?.current.primary?.wifi?.ssid == "cafe" && joined?.current.primary?.wifi?.owner == .iwd)

        let seen = recorder.events.count
        try iwd.control("Roam", "1", "02:11:22:33:44:66", "5180", "-62")
        let roam = recorder.first(after: seen, timeout: 10) { $0.primary?.wifi?.bssid == "02:11:22:33:44:66" }
        #expect(roam?.reason.code == .roamed && roam?.reason.interface == "wlan0")
        #expect(roam?.previous?.reachable == true && roam?.current.reachable == true)
        Thread.sleep(forTimeInterval: 1)
        #expect(recorder.events.count == seen + 1, "\(recorder.events.dropFirst(seen).map(\.reason))")

        try iwd.control("SetSignal", "1", "-86")
        #expect(waitUntil(timeout: 10) { monitor.status.linkQuality?.level == .minimal }, "\(monitor.status.linkQuality as Any)")
        #expect(monitor.status.linkQuality?.source == .radio)
        #expect(recorder.events.dropFirst(seen).contains { $0.reason.code == .wifiSignalChanged })
        #expect(recorder.duplicates.isEmpty)
    }
}
}
