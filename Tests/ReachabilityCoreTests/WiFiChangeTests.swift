import Testing
@testable import ReachabilityCore

@Suite struct WiFiChangeTests {
    static let ap1 = WiFiBSSID("02:00:00:00:00:01")
    static let ap2 = WiFiBSSID("02:00:00:00:00:02")

    static func station(_ ssid: String?, _ bssid: WiFiBSSID?, dbm: Double? = -60, rate: Int? = 300_000,
                        owner: WiFiOwner = .iwd) -> WiFiStation {
        WiFiStation(owner: owner, ssid: ssid.map(WiFiSSID.init), bssid: bssid, frequencyMHz: 5_180, signalDbm: dbm,
                    txBitrateKbps: rate)
    }

    static let cases: [(String, WiFiStation?, WiFiStation?, WiFiChange)] = [
        ("nothing", nil, nil, .none),
        ("joined", nil, station("Home", ap1), .joined),
        ("left", station("Home", ap1), nil, .left),
        ("same report", station("Home", ap1), station("Home", ap1), .none),
        ("roam", station("Home", ap1), station("Home", ap2), .roamed(from: ap1!, to: ap2!)),
        ("roam to a weaker access point is still one roam", station("Home", ap1, dbm: -50), station("Home", ap2, dbm: -85),
         .roamed(from: ap1!, to: ap2!)),
        ("another network", station("Home", ap1), station("Office", ap2), .switched),
        ("another network on the same access point (multi-SSID)", station("Home", ap1), station("Guest", ap1), .switched),
        ("signal within the bar", station("Home", ap1, dbm: -60), station("Home", ap1, dbm: -64), .figures),
        ("rate only", station("Home", ap1, rate: 300_000), station("Home", ap1, rate: 150_000), .figures),
        ("owner only", station("Home", ap1, owner: .nl80211), station("Home", ap1, owner: .iwd), .figures),
        ("signal across a bar edge", station("Home", ap1, dbm: -65), station("Home", ap1, dbm: -67), .bars(from: 3, to: 2)),
        ("signal lost", station("Home", ap1, dbm: -60), station("Home", ap1, dbm: nil), .bars(from: 3, to: nil)),
        ("BSSID learnt late", station("Home", nil), station("Home", ap1), .figures),
        ("BSSID lost", station("Home", ap1), station("Home", nil), .figures),
        ("hidden network, same access point", station("", ap1, dbm: -60), station("", ap1, dbm: -80), .bars(from: 3, to: 1)),
        ("hidden network, another access point", station("", ap1), station("", ap2), .switched),
        ("unnamed, same access point", station(nil, ap1), station("Home", ap1), .figures),
        ("unnamed, another access point", station(nil, ap1), station(nil, ap2), .switched),
        ("the same report, nothing to identify it", station(nil, nil), station(nil, nil), .none),
        ("nothing to tell them apart", station(nil, nil, dbm: -60), station(nil, nil, dbm: -61), .switched),
    ]

    @Test(arguments: cases)
    func change(_ name: String, old: WiFiStation?, new: WiFiStation?, expected: WiFiChange) {
        #expect(WiFiChange.between(old, new) == expected, "\(name)")
    }

    @Test func onlyFiguresAreQuiet() {
        #expect(WiFiChange.none.isQuiet && WiFiChange.figures.isQuiet)
        for loud in [WiFiChange.bars(from: 1, to: 2), .roamed(from: Self.ap1!, to: Self.ap2!), .joined, .left, .switched] {
            #expect(!loud.isQuiet)
        }
    }

    static let iwdStatesCases: [(String?, WiFiLinkState)] = [
        (nil, .unmanaged), ("connected", .connected), ("roaming", .roaming),
        ("connecting", .connecting), ("disconnecting", .disconnected), ("disconnected", .disconnected),
        ("something new", .disconnected), ("", .disconnected),
    ]

    @Test(arguments: iwdStatesCases)
    func iwdStates(state: String?, expected: WiFiLinkState) {
        #expect(WiFiLinkState(iwdStationState: state) == expected)
    }

    static let wpaSupplicantStatesCases: [(String?, WiFiLinkState)] = [
        (nil, .unmanaged), ("interface_disabled", .unmanaged), ("completed", .connected),
        ("authenticating", .connecting), ("associating", .connecting), ("associated", .connecting),
        ("4way_handshake", .connecting), ("group_handshake", .connecting), ("disconnected", .disconnected),
        ("inactive", .disconnected), ("scanning", .disconnected), ("unknown", .disconnected), ("COMPLETED", .disconnected),
    ]

    @Test(arguments: wpaSupplicantStatesCases)
    func wpaSupplicantStates(state: String?, expected: WiFiLinkState) {
        #expect(WiFiLinkState(wpaSupplicantState: state) == expected)
    }

    static let networkManagerStatesCases: [(UInt32, WiFiLinkState)] = [
        (0, .unmanaged), (10, .unmanaged), (20, .disconnected), (30, .disconnected),
        (40, .connecting), (50, .connecting), (60, .connecting), (70, .connecting), (80, .connecting), (90, .connecting),
        (100, .connected), (110, .disconnected), (120, .disconnected), (35, .unmanaged), (UInt32.max, .unmanaged),
    ]

    @Test(arguments: networkManagerStatesCases)
    func networkManagerStates(state: UInt32, expected: WiFiLinkState) {
        #expect(WiFiLinkState(networkManagerDeviceState: state) == expected)
    }

    static func claim(_ owner: WiFiOwner, _ state: WiFiLinkState) -> WiFiOwnerClaim {
        WiFiOwnerClaim(owner: owner, state: state, station: state.isConnected ? station("Home", ap1, owner: owner) : nil)
    }

    static let arbitration: [(String, [WiFiOwnerClaim], WiFiOwner?, Bool)] = [
        ("nobody", [], nil, false),
        ("the kernel alone", [claim(.nl80211, .connected)], .nl80211, false),
        ("iwd alone", [claim(.iwd, .connected), claim(.nl80211, .connected)], .iwd, true),
        ("NetworkManager over iwd, both connected", [claim(.iwd, .connected), claim(.networkManager, .connected)], .networkManager, true),
        ("NetworkManager leaves the device to iwd", [claim(.networkManager, .unmanaged), claim(.iwd, .connected)], .iwd, true),
        ("NetworkManager managing, iwd not", [claim(.networkManager, .connecting), claim(.iwd, .unmanaged)], .networkManager, true),
        ("the connected one over a lagging manager", [claim(.networkManager, .disconnected), claim(.iwd, .roaming)], .iwd, true),
        ("NetworkManager over wpa_supplicant", [claim(.wpaSupplicant, .connected), claim(.networkManager, .connected)], .networkManager, true),
        ("iwd over a leftover wpa_supplicant", [claim(.wpaSupplicant, .disconnected), claim(.iwd, .disconnected)], .iwd, true),
        ("wpa_supplicant connected, iwd idle", [claim(.iwd, .disconnected), claim(.wpaSupplicant, .connected)], .wpaSupplicant, true),
        ("a managing daemon over the kernel", [claim(.nl80211, .connected), claim(.wpaSupplicant, .disconnected)], .wpaSupplicant, true),
        ("nobody manages: the kernel", [claim(.networkManager, .unmanaged), claim(.iwd, .unmanaged), claim(.nl80211, .connected)],
         .nl80211, false),
        ("nobody manages, no kernel report", [claim(.networkManager, .unmanaged)], nil, false),
    ]

    @Test(arguments: arbitration)
    func arbiter(_ name: String, claims: [WiFiOwnerClaim], winner: WiFiOwner?, managed: Bool) {
        #expect(WiFiOwnerArbiter.winner(claims)?.owner == winner, "\(name)")
        // The order the claims arrive in does not matter.
        #expect(WiFiOwnerArbiter.winner(claims.reversed())?.owner == winner, "\(name), reversed")
        #expect(WiFiOwnerArbiter.isManagedAsWiFi(claims) == managed, "\(name)")
    }
}
