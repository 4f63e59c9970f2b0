import Foundation
import ReachabilityCore
import TestSupport
import Testing

/// The iwd and wpa_supplicant dbusmock templates, each on a private bus, read back with busctl
/// as a client would read the real daemons: the object trees, the properties and their types,
/// the diagnostics, the signal-level agent, and the errors. What is read goes through the pure
/// Wi-Fi model, so that the templates and the model agree on names and units.
extension SystemTests {
@Suite(.serialized) struct WiFiOwnerMockTests {
    /// The first result of a busctl JSON method-call answer (`{"type": …, "data": [results…]}`).
    private func data(_ answer: [String: Any]) -> Any? {
        (answer["data"] as? [Any])?.first
    }

    /// The value of a{sv} entry `key` (busctl: `{"type": …, "data": …}`).
    private func entry(_ dictionary: Any?, _ key: String) -> (type: String, value: Any)? {
        guard let dictionary = dictionary as? [String: Any], let field = dictionary[key] as? [String: Any],
              let type = field["type"] as? String, let value = field["data"] else { return nil }
        return (type, value)
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func iwdsTreeStationAndDiagnostics() throws {
        let bus = try PrivateBus()
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        #expect(try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10") == ["/net/connman/iwd/0/1"])
        let device = "/net/connman/iwd/0/1"

        // Disconnected: no ConnectedNetwork, GetDiagnostics refused with iwd's error.
        let idle = try iwd.busctlJSON("get-property", "net.connman.iwd", device, "net.connman.iwd.Station", "State")
        #expect(idle["type"] as? String == "s" && idle["data"] as? String == "disconnected")
        let missing = try iwd.busctl("get-property", "net.connman.iwd", device, "net.connman.iwd.Station", "ConnectedNetwork")
        #expect(missing.status != 0)
        let refused = try iwd.busctl("call", "net.connman.iwd", device, "net.connman.iwd.StationDiagnostic", "GetDiagnostics")
        #expect(refused.status != 0 && refused.output.contains("not connected"))

        try iwd.control("Connect", "1", "Home", "02:11:22:33:44:55", "5180", "-61")
        let tree = try iwd.busctlJSON("call", "net.connman.iwd", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        #expect(tree["type"] as? String == "a{oa{sa{sv}}}")
        let objects = try #require(data(tree) as? [String: [String: Any]])
        let network = "\(device)/486f6d65_psk"
        let accessPoint = "\(network)/021122334455"
        #expect(Set(objects.keys) == ["/net/connman/iwd", "/net/connman/iwd/0", device, network, accessPoint])
        let interfaces = try #require(objects[device])
        #expect(Set(interfaces.keys) == ["net.connman.iwd.Device", "net.connman.iwd.Station", "net.connman.iwd.StationDiagnostic"])
        let station = interfaces["net.connman.iwd.Station"]
        #expect(entry(station, "State")?.value as? String == "connected")
        #expect(entry(station, "ConnectedNetwork")?.type == "o")
        #expect(entry(station, "ConnectedNetwork")?.value as? String == network)
        #expect(entry(station, "ConnectedAccessPoint")?.value as? String == accessPoint)
        #expect(entry(interfaces["net.connman.iwd.Device"], "Name")?.value as? String == "wlan0")
        let networkProperties = objects[network]?["net.connman.iwd.Network"]
        #expect(entry(networkProperties, "Name")?.value as? String == "Home")
        #expect(entry(networkProperties, "Type")?.value as? String == "psk")
        #expect(entry(networkProperties, "Connected")?.value as? Bool == true)
        let address = try #require(entry(objects[accessPoint]?["net.connman.iwd.BasicServiceSet"], "Address")?.value as? String)

        let diagnostics = data(try iwd.busctlJSON("call", "net.connman.iwd", device, "net.connman.iwd.StationDiagnostic", "GetDiagnostics"))
        #expect(entry(diagnostics, "RSSI")?.type == "n")
        #expect(entry(diagnostics, "Frequency")?.type == "u")
        #expect(entry(diagnostics, "TxBitrate")?.type == "u")
        #expect(entry(diagnostics, "ConnectedBss")?.value as? String == address)
        let rssi = try #require(entry(diagnostics, "RSSI")?.value as? Int)
        let frequency = try #require(entry(diagnostics, "Frequency")?.value as? Int)
        let rate = try #require(entry(diagnostics, "TxBitrate")?.value as? Int)   // 100 kbit/s
        let model = WiFiStation(owner: .iwd, ssid: WiFiSSID("Home"), bssid: WiFiBSSID(address), frequencyMHz: frequency,
                                signalDbm: Double(rssi), txBitrateKbps: rate * 100)
        #expect(model.bssid?.description == "02:11:22:33:44:55")
        #expect(model.band == .band5GHz && model.bars == 3 && model.strengthPercent == 59 && model.txBitrateKbps == 866_700)
        #expect(WiFiLinkState(iwdStationState: entry(station, "State")?.value as? String) == .connected)

        // A roam: another BasicServiceSet of the same network, State back to connected.
        try iwd.control("Roam", "1", "02:11:22:33:44:66", "2437", "-50")
        let roamed = try iwd.busctlJSON("get-property", "net.connman.iwd", device, "net.connman.iwd.Station", "ConnectedAccessPoint")
        #expect(roamed["data"] as? String == "\(network)/021122334466")
        let after = data(try iwd.busctlJSON("call", "net.connman.iwd", device, "net.connman.iwd.StationDiagnostic", "GetDiagnostics"))
        let roamedModel = WiFiStation(owner: .iwd, ssid: WiFiSSID("Home"),
                                      bssid: WiFiBSSID(entry(after, "ConnectedBss")?.value as? String ?? ""),
                                      frequencyMHz: entry(after, "Frequency")?.value as? Int,
                                      signalDbm: (entry(after, "RSSI")?.value as? Int).map(Double.init))
        #expect(WiFiChange.between(model, roamedModel) == .roamed(from: try #require(WiFiBSSID("02:11:22:33:44:55")),
                                                                  to: try #require(WiFiBSSID("02:11:22:33:44:66"))))
        #expect(roamedModel.band == .band2_4GHz && roamedModel.bars == 4)

        // Disconnected again: ConnectedNetwork is gone, as in iwd.
        try iwd.control("Disconnect", "1")
        #expect(try iwd.busctl("get-property", "net.connman.iwd", device, "net.connman.iwd.Station", "ConnectedNetwork").status != 0)
        try iwd.control("RemoveStation", "1")
        let emptied = try #require(data(try iwd.busctlJSON("call", "net.connman.iwd", "/", "org.freedesktop.DBus.ObjectManager",
                                                            "GetManagedObjects")) as? [String: Any])
        #expect(Set(emptied.keys) == ["/net/connman/iwd", "/net/connman/iwd/0"])
    }

    /// One agent at a time, levels descending; Changed at registration and at each level edge,
    /// with the levels reachd's thresholds give.
    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func iwdsSignalLevelAgent() throws {
        let bus = try PrivateBus()
        let iwd = try WiFiOwnerMock(.iwd, bus: bus)
        try iwd.control("AddStation", "1", "wlan0", "02:00:00:00:00:10")
        try iwd.control("Connect", "1", "Home", "02:11:22:33:44:55", "5180", "-61")
        let device = "/net/connman/iwd/0/1"
        let levels = WiFiSignalScale.iwdAgentLevels.map(String.init)
        let register = ["call", "net.connman.iwd", device, "net.connman.iwd.Station", "RegisterSignalLevelAgent", "oan", "/agent",
                        "\(levels.count)"] + levels
        let ascending = try iwd.busctl("call", "net.connman.iwd", device, "net.connman.iwd.Station", "RegisterSignalLevelAgent",
                                       "oan", "/agent", "2", "-80", "-50")
        #expect(ascending.status != 0)
        func run(_ words: [String]) throws -> Int32 {
            try sh((["busctl", "--address=\(bus.address)", words[0], "--"] + words.dropFirst()).map { "'\($0)'" }.joined(separator: " "),
                   check: false).status
        }
        #expect(try run(register) == 0)
        #expect(try run(register) != 0)     // iwd allows one agent
        // −64 and −40 stay in the level before them: no call; −55 sits on an edge (level 0).
        for dbm in ["-64", "-70", "-90", "-85", "-55", "-40"] { try iwd.control("SetSignal", "1", dbm) }
        let calls = try iwd.control("AgentCalls")
        #expect(calls == ["Register /agent -55,-66,-77,-88", "Changed \(device) 1", "Changed \(device) 2",
                          "Changed \(device) 4", "Changed \(device) 3", "Changed \(device) 0"])
        // The levels iwd sends are the bars reachd shows for the same signals.
        let bars = calls.dropFirst().compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .compactMap { WiFiSignalScale.bars(iwdAgentLevel: $0) }
        #expect(bars == [-61, -70, -90, -85, -55].map { WiFiSignalScale.bars(dbm: $0, band: .band5GHz) })
        #expect(try run(["call", "net.connman.iwd", device, "net.connman.iwd.Station", "UnregisterSignalLevelAgent", "o", "/other"]) != 0)
        #expect(try run(["call", "net.connman.iwd", device, "net.connman.iwd.Station", "UnregisterSignalLevelAgent", "o", "/agent"]) == 0)
    }

    @Test(.requires(.dbusDaemon, .busctl, .dbusMock)) func wpaSupplicantsInterfacesAndAccessPoints() throws {
        let bus = try PrivateBus()
        let wpa = try WiFiOwnerMock(.wpaSupplicant, bus: bus)
        let main = "/fi/w1/wpa_supplicant1"
        #expect(try wpa.control("AddInterface", "0", "wlan0") == ["\(main)/Interfaces/0"])
        let interface = "\(main)/Interfaces/0"
        // SSID bytes that are not UTF-8, with an escape character.
        try wpa.control("AddBSS", "0", "1", "hex:486f6d651bff", "02:11:22:33:44:55", "2437", "-70")
        try wpa.control("AddBSS", "0", "2", "Home", "02:11:22:33:44:66", "5745", "-52")

        let unknown = try wpa.busctl("call", "fi.w1.wpa_supplicant1", main, "fi.w1.wpa_supplicant1", "GetInterface", "s", "wlan9")
        #expect(unknown.status != 0)
        let found = try wpa.busctlJSON("call", "fi.w1.wpa_supplicant1", main, "fi.w1.wpa_supplicant1", "GetInterface", "s", "wlan0")
        #expect((found["data"] as? [String])?.first == interface)
        let listed = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", main, "fi.w1.wpa_supplicant1", "Interfaces")
        #expect(listed["type"] as? String == "ao" && listed["data"] as? [String] == [interface])
        let notAssociated = try wpa.busctl("call", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "SignalPoll")
        #expect(notAssociated.status != 0 && notAssociated.output.contains("Failed to read signal"))
        let current = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "CurrentBSS")
        #expect(current["data"] as? String == "/")

        try wpa.control("Associate", "0", "1", "433")
        let state = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "State")
        #expect(state["data"] as? String == "completed")
        let bssPath = try #require(try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", interface,
                                                      "fi.w1.wpa_supplicant1.Interface", "CurrentBSS")["data"] as? String)
        #expect(bssPath == "\(interface)/BSSs/1")
        let bss = data(try wpa.busctlJSON("call", "fi.w1.wpa_supplicant1", bssPath, "org.freedesktop.DBus.Properties", "GetAll",
                                          "s", "fi.w1.wpa_supplicant1.BSS"))
        #expect(entry(bss, "SSID")?.type == "ay" && entry(bss, "BSSID")?.type == "ay")
        #expect(entry(bss, "Signal")?.type == "n" && entry(bss, "Frequency")?.type == "q")
        let ssid = try #require((entry(bss, "SSID")?.value as? [Int])?.map { UInt8($0) })
        let bssid = try #require((entry(bss, "BSSID")?.value as? [Int])?.map { UInt8($0) })
        #expect(ssid == [0x48, 0x6F, 0x6D, 0x65, 0x1B, 0xFF])

        // SignalPoll answers a variant holding a{sv}, as wpa_supplicant does.
        let poll = try wpa.busctlJSON("call", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "SignalPoll")
        #expect(poll["type"] as? String == "v")
        let variant = try #require((poll["data"] as? [Any])?.first as? [String: Any])
        #expect(variant["type"] as? String == "a{sv}")
        let figures = variant["data"]
        #expect(entry(figures, "rssi")?.type == "i" && entry(figures, "linkspeed")?.type == "i")
        let linkspeed = try #require(entry(figures, "linkspeed")?.value as? Int)   // Mbit/s

        let model = WiFiStation(owner: .wpaSupplicant, ssid: WiFiSSID(bytes: ssid), bssid: WiFiBSSID(bytes: bssid),
                                frequencyMHz: entry(bss, "Frequency")?.value as? Int,
                                signalDbm: (entry(bss, "Signal")?.value as? Int).map(Double.init), txBitrateKbps: linkspeed * 1_000)
        #expect(model.ssid?.display == "Home\\x1b\\xff")
        #expect(model.bssid?.description == "02:11:22:33:44:55")
        #expect(model.band == .band2_4GHz && model.signalDbm == -70 && model.bars == 2 && model.txBitrateKbps == 433_000)
        #expect(WiFiLinkState(wpaSupplicantState: state["data"] as? String) == .connected)

        try wpa.control("SetSignal", "0", "1", "-80")
        let weaker = data(try wpa.busctlJSON("call", "fi.w1.wpa_supplicant1", bssPath, "org.freedesktop.DBus.Properties", "Get",
                                             "ss", "fi.w1.wpa_supplicant1.BSS", "Signal"))
        #expect((weaker as? [String: Any])?["data"] as? Int == -80)

        try wpa.control("Roam", "0", "2", "false")
        let roamed = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "CurrentBSS")
        #expect(roamed["data"] as? String == "\(interface)/BSSs/2")

        try wpa.control("Disconnect", "0")
        let gone = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", interface, "fi.w1.wpa_supplicant1.Interface", "CurrentBSS")
        #expect(gone["data"] as? String == "/")
        try wpa.control("RemoveInterface", "0")
        let none = try wpa.busctlJSON("get-property", "fi.w1.wpa_supplicant1", main, "fi.w1.wpa_supplicant1", "Interfaces")
        #expect((none["data"] as? [String])?.isEmpty == true)
    }
}
}
