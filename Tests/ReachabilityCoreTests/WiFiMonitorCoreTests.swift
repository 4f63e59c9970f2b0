import Foundation
import Testing
@testable import ReachabilityCore

/// The Wi-Fi owners' reports in the monitor's core: a device an owner manages is Wi-Fi whatever
/// sysfs says, a roam is one `roamed` event with no reachability flap, a signal that keeps its
/// bars moves quietly, new bars are `wifiSignalChanged`, and one bar caps the link's quality.
@Suite struct WiFiMonitorCoreTests {
    private static let t0 = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 500)
    static let first = WiFiBSSID("02:11:22:33:44:55")!, second = WiFiBSSID("02:11:22:33:44:66")!

    private static func events(_ actions: [MonitorCore.Action]) -> [ReachabilityEvent] { MonitorMachine.events(actions) }

    private static func quiet(_ actions: [MonitorCore.Action]) -> [Status] {
        actions.compactMap { if case .quiet(let status) = $0 { status } else { nil } }
    }

    private static func started() -> MonitorCore { MonitorMachine.startedCore(now: t0) }

    static func device(_ bssid: WiFiBSSID? = first, ssid: [UInt8] = Array("cafe".utf8), dbm: Double? = -61,
                       owner: WiFiOwner = .iwd, interface: String = "eth0") -> WiFiDevice {
        WiFiDevice(interface: interface, owner: owner, state: .connected,
                   station: WiFiStation(owner: owner, ssid: WiFiSSID(bytes: ssid), bssid: bssid, frequencyMHz: 5180,
                                        signalDbm: dbm, txBitrateKbps: 866_700))
    }

    private static func joined() -> MonitorCore {
        var core = started()
        _ = core.wifiChanged([device()], now: t0.adding(1))
        return core
    }

    @Test func aDeviceItsOwnerManagesIsWiFiWhateverSysfsSays() throws {
        var core = Self.started()
        #expect(core.status.status == .ethernet && core.status.primary?.kind == .ethernet)
        let event = try #require(Self.events(core.wifiChanged([Self.device()], now: Self.t0.adding(1))).first)
        #expect(event.reason == Reason(code: .wifiChanged, interface: "eth0", detail: "network cafe"))
        #expect(event.current.status == .wifi && event.current.primary?.kind == .wifi)
        let wifi = try #require(event.current.primary?.wifi)
        #expect(wifi == WiFi(ssid: "cafe", bssid: "02:11:22:33:44:55", frequencyMHz: 5180, band: .band5GHz, signalDbm: -61,
                             strengthPercent: WiFiSignalScale.strengthPercent(dbm: -61), bars: 3, txBitrateKbps: 866_700,
                             owner: .iwd))
        // Managed but not connected: still Wi-Fi, no connection shown.
        let idle = WiFiDevice(interface: "eth0", owner: .wpaSupplicant, state: .disconnected)
        let left = try #require(Self.events(core.wifiChanged([idle], now: Self.t0.adding(2))).first)
        #expect(left.reason.code == .wifiChanged)
        #expect(left.current.primary?.kind == .wifi && left.current.primary?.wifi == nil)
        // No owner at all: sysfs decides again.
        let gone = try #require(Self.events(core.wifiChanged([], now: Self.t0.adding(3))).first)
        #expect(gone.current.primary?.kind == .ethernet && gone.current.status == .ethernet)
    }

    @Test func aRoamIsOneEventWithNoReachabilityFlap() throws {
        var core = Self.joined()
        let before = core.status
        let actions = core.wifiChanged([Self.device(Self.second, dbm: -62)], now: Self.t0.adding(2))
        let events = Self.events(actions)
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.reason == Reason(code: .roamed, interface: "eth0", detail: "network cafe"))
        #expect(event.changes == ["interfaces", "primary"])
        #expect(event.current.reachable && event.current.status == before.status && event.current.connectivity == before.connectivity)
        #expect(event.current.primary?.wifi?.bssid == "02:11:22:33:44:66")
    }

    @Test func aSignalThatKeepsItsBarsIsQuiet() throws {
        var core = Self.joined()
        let actions = core.wifiChanged([Self.device(dbm: -58)], now: Self.t0.adding(2))
        #expect(Self.events(actions).isEmpty)
        let quiet = try #require(Self.quiet(actions).last)
        #expect(quiet.primary?.wifi?.signalDbm == -58 && quiet.primary?.wifi?.bars == 3)
        #expect(core.status.primary?.wifi?.signalDbm == -58)
        // Another channel and owner on the same access point, same bars: quiet too.
        var moved = Self.device(dbm: -58, owner: .networkManager)
        moved.station = WiFiStation(owner: .networkManager, ssid: WiFiSSID("cafe"), bssid: Self.first, frequencyMHz: 5200,
                                    signalDbm: -58)
        #expect(Self.events(core.wifiChanged([moved], now: Self.t0.adding(3))).isEmpty)
        #expect(core.status.primary?.wifi?.frequencyMHz == 5200)
    }

    @Test func newBarsAreOneEventWiFiSignalChanged() throws {
        var core = Self.joined()
        let events = Self.events(core.wifiChanged([Self.device(dbm: -70)], now: Self.t0.adding(2)))
        let event = try #require(events.first)
        #expect(event.reason == Reason(code: .wifiSignalChanged, interface: "eth0", detail: "3 to 2 bars"))
        #expect(event.current.primary?.wifi?.bars == 2)
        #expect(!event.changes.contains("reachable") && !event.changes.contains("status"))
    }

    @Test func oneBarCapsTheLinkQualityAtMinimal() throws {
        var core = Self.joined()
        #expect(core.status.linkQuality?.level == .good)
        _ = core.wifiChanged([Self.device(dbm: -85)], now: Self.t0.adding(2))
        let quality = try #require(core.status.linkQuality)
        #expect(quality.level == .minimal && quality.source == .radio)
        #expect(quality.signal == RadioSignal(technology: "wifi", rssi: -85, level: 1))
        _ = core.wifiChanged([Self.device(dbm: -50)], now: Self.t0.adding(3))
        #expect(core.status.linkQuality?.level == .good)
    }

    @Test func aHostileNetworkNameIsEscapedAndOnlyItsBytesTellARoam() throws {
        var core = Self.started()
        let hostile: [UInt8] = [0x1b, 0x5d, 0x30, 0x3b, 0xe2, 0x80, 0xae, 0xff, 0x41]
        let event = try #require(Self.events(core.wifiChanged([Self.device(ssid: hostile, dbm: .nan)], now: Self.t0.adding(1))).first)
        let wifi = try #require(event.current.primary?.wifi)
        #expect(wifi.ssid == #"\x1b]0;\u{202e}\xffA"#)
        #expect(wifi.signalDbm == nil && wifi.bars == nil && wifi.strengthPercent == nil)
        // A hidden network on another access point cannot be told to be the same one.
        _ = core.wifiChanged([Self.device(ssid: [], dbm: -60)], now: Self.t0.adding(2))
        let switched = try #require(Self.events(core.wifiChanged([Self.device(Self.second, ssid: [], dbm: -60)],
                                                                 now: Self.t0.adding(3))).first)
        #expect(switched.reason.code == .wifiChanged)
    }

    /// The wire form: only the network, the access point and the bars count as a change.
    @Test func onlyNetworkAccessPointAndBarsAreShownChanges() {
        let base = WiFi(WiFiStation(owner: .iwd, ssid: WiFiSSID("cafe"), bssid: Self.first, frequencyMHz: 2412, signalDbm: -60))
        var figures = base
        figures.signalDbm = -57; figures.strengthPercent = 74; figures.txBitrateKbps = 1; figures.frequencyMHz = 2437
        figures.owner = .wpaSupplicant
        #expect(!WiFi.differsAsShown(base, figures))
        var bars = base
        bars.bars = 1
        var roamed = base
        roamed.bssid = "02:11:22:33:44:66"
        var renamed = base
        renamed.ssid = "other"
        for other in [bars, roamed, renamed] { #expect(WiFi.differsAsShown(base, other)) }
        #expect(WiFi.differsAsShown(base, nil) && !WiFi.differsAsShown(nil, nil))
        let interface = Interface(name: "wlan0", index: 3, kind: .wifi, up: true, carrier: true, operstate: "up", addresses: [],
                                  metered: false, wifi: base)
        var quieter = interface
        quieter.wifi = figures
        #expect(!interface.differs(from: quieter) && interface.differs(from: { var i = interface; i.wifi = bars; return i }()))
    }
}
