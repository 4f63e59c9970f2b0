import Foundation
import Reachability
import ReachabilityCore
import Testing

/// `Path.wifi`: the primary's Wi-Fi connection for apps, only while the path is satisfied.
@Suite struct PathWiFiTests {
    static func status(reachable: Bool, wifi: WiFi?) -> ReachabilityCore.Status {
        let wlan0 = Interface(name: "wlan0", index: 3, kind: .wifi, up: true, carrier: true, operstate: "up",
                              addresses: ["10.1.0.2/24"], metered: false, wifi: wifi)
        return ReachabilityCore.Status(status: reachable ? .wifi : .notReachable, reachable: reachable,
                                       connectivity: reachable ? .full : .none, primary: reachable ? wlan0 : nil, vpn: nil,
                                       cellular: nil, expensive: false, ipv4: reachable, ipv6: false, gateways: [],
                                       flags: reachable ? [.reachable] : [], interfaces: [wlan0], probe: nil,
                                       since: Date(timeIntervalSince1970: 0))
    }

    @Test func theNetworkBandAndBarsOfAWiFiPath() throws {
        let wifi = WiFi(ssid: "cafe", frequencyMHz: 5180, band: .band5GHz, signalDbm: -85, strengthPercent: 35, bars: 1,
                        owner: .networkManager)
        let path = Path(Self.status(reachable: true, wifi: wifi))
        #expect(path.usesInterfaceType(.wifi))
        #expect(path.wifi == wifi && path.wifi?.bars == 1 && path.wifi?.band == .band5GHz)
        // Not root: the access point stays unknown to the app.
        #expect(path.wifi?.bssid == nil)
        #expect(Path(Self.status(reachable: false, wifi: wifi)).wifi == nil)
        #expect(Path(Self.status(reachable: true, wifi: nil)).wifi == nil)
    }
}
