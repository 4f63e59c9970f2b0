import Testing
@testable import ReachabilityCore

/// The three owners' D-Bus views, fed decoded messages as the sd-bus source does: what each one
/// claims per interface, and what the arbiter makes of the claims together.
@Suite struct WiFiOwnerModelTests {
    /// `#expect` of a mutating call's answer (the macro cannot take the call itself).
    static func check(_ ok: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(ok, sourceLocation: sourceLocation)
    }

    static func dict(_ entries: [(String, DBusValue)]) -> DBusValue {
        .array(entries.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    static func bytes(_ values: [UInt8]) -> DBusValue { .array(values.map(DBusValue.byte)) }

    /// `a{oa{sa{sv}}}`.
    static func tree(_ objects: [(String, [(String, [(String, DBusValue)])])]) -> [DBusValue] {
        [.array(objects.map { path, interfaces in
            .dictEntry(.objectPath(path), .array(interfaces.map { name, properties in .dictEntry(.string(name), dict(properties)) }))
        })]
    }

    static let nmDevice = "/org/freedesktop/NetworkManager/Devices/3"
    static let nmPoint = "/org/freedesktop/NetworkManager/AccessPoint/7"

    static func networkManager(state: UInt32 = 100, activePoint: String = nmPoint) -> NetworkManagerWiFiModel {
        var model = NetworkManagerWiFiModel()
        Self.check(model.mirror.apply(managedObjects: tree([
            (nmDevice, [
                (NetworkManagerDBus.deviceInterface, [("Interface", .string("wlan0")), ("State", .uint32(state)), ("DeviceType", .uint32(2))]),
                (NetworkManagerWiFiModel.wirelessInterface, [("ActiveAccessPoint", .objectPath(activePoint)), ("Bitrate", .uint32(270_000))]),
            ]),
            (nmPoint, [(NetworkManagerWiFiModel.accessPointInterface, [
                ("Ssid", bytes(Array("cafe".utf8))), ("HwAddress", .string("02:11:22:33:44:55")),
                ("Frequency", .uint32(5180)), ("Strength", .byte(71)),
            ])]),
            ("/org/freedesktop/NetworkManager/Devices/1", [
                (NetworkManagerDBus.deviceInterface, [("Interface", .string("eth0")), ("State", .uint32(100))]),
            ]),
        ])))
        return model
    }

    @Test func networkManagerClaimsItsWiFiDevicesOnly() throws {
        let claims = Self.networkManager().claims
        #expect(Array(claims.keys) == ["wlan0"])
        let claim = try #require(claims["wlan0"])
        #expect(claim.owner == .networkManager && claim.state == .connected)
        let station = try #require(claim.station)
        #expect(station.ssid == WiFiSSID("cafe") && station.bssid == WiFiBSSID("02:11:22:33:44:55"))
        #expect(station.frequencyMHz == 5180 && station.band == .band5GHz && station.strengthPercent == 71)
        #expect(station.txBitrateKbps == 270_000 && station.signalDbm == nil && station.bars == nil)
        // Unmanaged (10) with no access point: a claim that manages nothing.
        let unmanaged = try #require(Self.networkManager(state: 10, activePoint: "/").claims["wlan0"])
        #expect(unmanaged.state == .unmanaged && unmanaged.station == nil)
    }

    @Test func networkManagerFollowsTheActiveAccessPoint() throws {
        var model = Self.networkManager()
        let other = "/org/freedesktop/NetworkManager/AccessPoint/8"
        Self.check(model.mirror.apply(signal: "InterfacesAdded", path: "/org/freedesktop", arguments: [
            .objectPath(other), .array([.dictEntry(.string(NetworkManagerWiFiModel.accessPointInterface), Self.dict([
                ("Ssid", Self.bytes(Array("cafe".utf8))), ("HwAddress", .string("02:11:22:33:44:66")),
                ("Frequency", .uint32(2412)), ("Strength", .byte(40)),
            ]))]),
        ]))
        Self.check(model.mirror.apply(signal: "PropertiesChanged", path: Self.nmDevice, arguments: [
            .string(NetworkManagerWiFiModel.wirelessInterface), Self.dict([("ActiveAccessPoint", .objectPath(other))]), .array([]),
        ]))
        let station = try #require(model.claims["wlan0"]?.station)
        #expect(station.bssid == WiFiBSSID("02:11:22:33:44:66") && station.band == .band2_4GHz && station.strengthPercent == 40)
        // A hostile Strength (300) is no percentage.
        Self.check(model.mirror.apply(signal: "PropertiesChanged", path: other, arguments: [
            .string(NetworkManagerWiFiModel.accessPointInterface), Self.dict([("Strength", .uint32(300))]), .array([]),
        ]))
        #expect(model.claims["wlan0"]?.station?.strengthPercent == nil)
    }

    static let iwdDevice = "/net/connman/iwd/0/1"
    static let iwdNetwork = "/net/connman/iwd/0/1/63616665_psk"
    static let iwdPoint = "/net/connman/iwd/0/1/63616665_psk/021122334455"

    static func iwd(state: String = "connected") -> IWDModel {
        var model = IWDModel()
        var station: [(String, DBusValue)] = [("State", .string(state))]
        if state == "connected" { station += [("ConnectedNetwork", .objectPath(iwdNetwork)), ("ConnectedAccessPoint", .objectPath(iwdPoint))] }
        Self.check(model.mirror.apply(managedObjects: tree([
            (iwdDevice, [(IWDModel.deviceInterface, [("Name", .string("wlan0"))]), (IWDModel.stationInterface, station)]),
            (iwdNetwork, [(IWDModel.networkInterface, [("Name", .string("cafe"))])]),
            (iwdPoint, [(IWDModel.bssInterface, [("Address", .string("02:11:22:33:44:55"))])]),
            ("/net/connman/iwd/0/2", [(IWDModel.deviceInterface, [("Name", .string("wlan1")), ("Mode", .string("ap"))])]),
        ])))
        return model
    }

    @Test func iwdTakesItsFiguresFromTheDiagnosticsOfTheSameAccessPoint() throws {
        var model = Self.iwd()
        #expect(model.connectedDevices == [Self.iwdDevice])
        #expect(model.claims["wlan1"]?.state == .unmanaged)
        model.apply(diagnostics: [Self.dict([("ConnectedBss", .string("02:11:22:33:44:55")), ("RSSI", .int16(-61)),
                                             ("Frequency", .uint32(5180)), ("TxBitrate", .uint32(8667))])], path: Self.iwdDevice)
        let station = try #require(model.claims["wlan0"]?.station)
        #expect(station.ssid == WiFiSSID("cafe") && station.signalDbm == -61 && station.bars == 3)
        #expect(station.txBitrateKbps == 866_700 && station.frequencyMHz == 5180)
        // Diagnostics of another access point (read before the roam was announced) are not mixed in.
        model.apply(diagnostics: [Self.dict([("ConnectedBss", .string("02:11:22:33:44:66")), ("RSSI", .int16(-80))])], path: Self.iwdDevice)
        let mixed = try #require(model.claims["wlan0"]?.station)
        #expect(mixed.bssid == WiFiBSSID("02:11:22:33:44:55") && mixed.signalDbm == nil)
        // Disconnected: no station, and the diagnostics go.
        Self.check(model.mirror.apply(signal: "PropertiesChanged", path: Self.iwdDevice, arguments: [
            .string(IWDModel.stationInterface), Self.dict([("State", .string("disconnected"))]),
            .array([.string("ConnectedNetwork"), .string("ConnectedAccessPoint")]),
        ]))
        model.pruneDiagnostics()
        #expect(model.diagnostics.isEmpty && model.claims["wlan0"] == WiFiOwnerClaim(owner: .iwd, state: .disconnected))
    }

    static let wpaInterface = "/fi/w1/wpa_supplicant1/Interfaces/0"
    static let wpaBSS = "/fi/w1/wpa_supplicant1/Interfaces/0/BSSs/1"

    @Test func wpaSupplicantIsReadPieceByPiece() throws {
        var model = WPASupplicantModel()
        #expect(model.wanted.map(\.path) == [WPASupplicantModel.path])
        Self.check(model.mirror.apply(getAll: [Self.dict([("Interfaces", .array([.objectPath(Self.wpaInterface)]))])],
                                   path: WPASupplicantModel.path, interface: WPASupplicantModel.mainInterface))
        #expect(model.wanted.map(\.path) == [Self.wpaInterface])
        Self.check(model.mirror.apply(getAll: [Self.dict([("Ifname", .string("wlan0")), ("State", .string("completed")),
                                                       ("CurrentBSS", .objectPath(Self.wpaBSS))])],
                                   path: Self.wpaInterface, interface: WPASupplicantModel.interfaceInterface))
        #expect(model.wanted.map(\.path) == [Self.wpaBSS])
        // Connected, but the BSS is not known yet: no station to show.
        #expect(model.claims["wlan0"] == WiFiOwnerClaim(owner: .wpaSupplicant, state: .connected))
        Self.check(model.mirror.apply(getAll: [Self.dict([("SSID", Self.bytes([0x48, 0x1b, 0xff])), ("BSSID", Self.bytes([2, 0x11, 0x22, 0x33, 0x44, 0x55])),
                                                       ("Frequency", .uint16(2437)), ("Signal", .int16(-70))])],
                                   path: Self.wpaBSS, interface: WPASupplicantModel.bssInterface))
        #expect(model.wanted.isEmpty && model.connectedInterfaces == [Self.wpaInterface])
        var station = try #require(model.claims["wlan0"]?.station)
        #expect(station.ssid?.display == #"H\x1b\xff"# && station.signalDbm == -70 && station.bars == 2 && station.band == .band2_4GHz)
        // SignalPoll (an a{sv} in a variant) wins over the scan's figure, for the BSS it was read on.
        model.apply(signalPoll: [.variant(Self.dict([("rssi", .int32(-60)), ("linkspeed", .int32(144))]))], path: Self.wpaInterface)
        station = try #require(model.claims["wlan0"]?.station)
        #expect(station.signalDbm == -60 && station.txBitrateKbps == 144_000)
        Self.check(model.apply(signal: "InterfaceRemoved", path: WPASupplicantModel.path, arguments: [.objectPath(Self.wpaInterface)]))
        #expect(model.claims.isEmpty && model.polls.isEmpty)
    }

    /// A reassociation (associating … completed, to another BSS) keeps the connection: roaming,
    /// with the station it had; a first association does not count as connected before it completes.
    @Test func aWPASupplicantReassociationIsARoamNotALoss() throws {
        var model = WPASupplicantModel()
        Self.check(model.apply(getAll: [Self.dict([("Interfaces", .array([.objectPath(Self.wpaInterface)]))])],
                               path: WPASupplicantModel.path, interface: WPASupplicantModel.mainInterface))
        Self.check(model.apply(getAll: [Self.dict([("Ifname", .string("wlan0")), ("State", .string("associating")),
                                                   ("CurrentBSS", .objectPath(Self.wpaBSS))])],
                               path: Self.wpaInterface, interface: WPASupplicantModel.interfaceInterface))
        Self.check(model.apply(getAll: [Self.dict([("SSID", Self.bytes(Array("cafe".utf8))), ("BSSID", Self.bytes([2, 0x11, 0x22, 0x33, 0x44, 0x55])),
                                                   ("Frequency", .uint16(2437)), ("Signal", .int16(-60))])],
                               path: Self.wpaBSS, interface: WPASupplicantModel.bssInterface))
        #expect(model.claims["wlan0"] == WiFiOwnerClaim(owner: .wpaSupplicant, state: .connecting))
        func state(_ name: String) -> [DBusValue] {
            [.string(WPASupplicantModel.interfaceInterface), Self.dict([("State", .string(name))]), .array([])]
        }
        Self.check(model.apply(signal: "PropertiesChanged", path: Self.wpaInterface, arguments: state("completed")))
        #expect(model.claims["wlan0"]?.state == .connected)
        for transitional in ["associating", "associated", "4way_handshake"] {
            Self.check(model.apply(signal: "PropertiesChanged", path: Self.wpaInterface, arguments: state(transitional)))
            let claim = try #require(model.claims["wlan0"])
            #expect(claim.state == .roaming && claim.station?.ssid == WiFiSSID("cafe"), "\(transitional)")
        }
        Self.check(model.apply(signal: "PropertiesChanged", path: Self.wpaInterface, arguments: state("disconnected")))
        Self.check(model.apply(signal: "PropertiesChanged", path: Self.wpaInterface, arguments: state("associating")))
        #expect(model.claims["wlan0"]?.state == .connecting && model.claims["wlan0"]?.station == nil)
    }

    /// Two owners claiming one device: the one that manages it (and is connected) wins.
    @Test func twoOwnersClaimingOneDevice() throws {
        var iwd = Self.iwd()
        iwd.apply(diagnostics: [Self.dict([("RSSI", .int16(-50)), ("ConnectedBss", .string("02:11:22:33:44:55"))])], path: Self.iwdDevice)
        let managed = Self.networkManager(), unmanaged = Self.networkManager(state: 10, activePoint: "/")
        for (networkManager, winner) in [(managed, WiFiOwner.networkManager), (unmanaged, .iwd)] {
            let claims = ["wlan0": [networkManager.claims["wlan0"], iwd.claims["wlan0"]].compactMap { $0 }]
            let device = try #require(WiFiDevice.arbitrate(claims).first)
            #expect(device.owner == winner && device.isManagedAsWiFi && device.station?.owner == winner)
        }
    }
}
