import Foundation
import Testing
@testable import ReachabilityCore

/// The hex of `text`'s bytes, as networkd's `hexmem()` writes them.
private func hex(_ text: String) -> String {
    text.utf8.map { String(format: "%02x", $0) }.joined()
}

/// A key=value lease as systemd-networkd 252 writes it (sd-dhcp-lease.c, `dhcp_lease_save()`).
private func keyValueLease(vendor: String?) -> String {
    var lines = [
        "# This is private data. Do not parse.",
        "ADDRESS=192.168.43.20", "NETMASK=255.255.255.0", "ROUTER=192.168.43.1",
        "SERVER_ADDRESS=192.168.43.1", "LIFETIME=3600", "DNS=192.168.43.1",
        "HOSTNAME=android-5f3a", "CLIENTID=ffb6220feb00020000ab11",
    ]
    if let vendor { lines.append("VENDOR_SPECIFIC=\(vendor)") }
    lines.append("OPTION_224=48616c6c6f")
    return lines.joined(separator: "\n") + "\n"
}

/// A JSON lease as newer networkd writes it (`dhcp_lease_append_json()`).
private func jsonLease(vendor: String?) -> String {
    var fields = [
        #""Address":[192,168,43,20]"#, #""Netmask":[255,255,255,0]"#, #""Router":[[192,168,43,1]]"#,
        #""Server_Address":[192,168,43,1]"#, #""Lifetime":"1h""#, #""T1":"30min""#,
        #""Servers":{"DNS":[[192,168,43,1]]}"#, #""Hostname":"android-5f3a""#,
        #""Timestamp_realtime":"Fri 2026-12-04 21:00:00.000000 UTC""#,
        #""Private_Options":[{"Option":224,"Data":"48616c6c6f"}]"#,
    ]
    if let vendor { fields.append(#""Vendor_Specific":"\#(vendor)""#) }
    return "{\n\t" + fields.joined(separator: ",\n\t") + "\n}\n"
}

struct DHCPLeaseTests {
    @Test(arguments: [
        ("ANDROID_METERED", true),
        // Encapsulated as sub-option 1 (what some hotspots send): found anywhere in the option.
        ("\u{01}\u{0F}ANDROID_METERED", true),
        ("ANDROID_UNMETERED", false),
        ("android_metered", false),
        ("ANDROID_METERE", false),
        ("vendor=acme", false),
    ])
    func keyValueForm(vendor: String, metered: Bool) throws {
        let lease = try DHCPLease.parse(Array(keyValueLease(vendor: hex(vendor)).utf8))
        #expect(lease.vendorSpecific == Array(vendor.utf8))
        #expect(lease.isAndroidMetered == metered)
    }

    @Test(arguments: [("ANDROID_METERED", true), ("xxANDROID_METEREDxx", true), ("ANDROID", false)])
    func jsonForm(vendor: String, metered: Bool) throws {
        let lease = try DHCPLease.parse(Array(jsonLease(vendor: hex(vendor)).utf8))
        #expect(lease.vendorSpecific == Array(vendor.utf8))
        #expect(lease.isAndroidMetered == metered)
    }

    @Test func withoutOption43NothingIsGuessed() throws {
        for text in [keyValueLease(vendor: nil), jsonLease(vendor: nil), #"{"Vendor_Specific":null}"#] {
            let lease = try DHCPLease.parse(Array(text.utf8))
            #expect(lease.vendorSpecific == nil)
            #expect(!lease.isAndroidMetered)
        }
    }

    @Test func upperCaseHexAndQuotesAreRead() throws {
        let upper = hex("ANDROID_METERED").uppercased()
        #expect(try DHCPLease.parse(Array("VENDOR_SPECIFIC=\(upper)\n".utf8)).isAndroidMetered)
        #expect(try DHCPLease.parse(Array("VENDOR_SPECIFIC=\"\(upper)\"\n".utf8)).isAndroidMetered)
        #expect(try DHCPLease.parse(Array(#"  {"Vendor_Specific":"\#(upper)"}"#.utf8)).isAndroidMetered)
    }

    @Test(arguments: [
        // Cut short: networkd ends every line.
        ("ADDRESS=192.168.43.20\nVENDOR_SPECIFIC=414e44", "truncated: the last line has no end"),
        ("ADDRESS=192.168.43.20\nVENDOR_SPECIFIC=414e4\n", "line 2: VENDOR_SPECIFIC: odd number of hex digits"),
        ("VENDOR_SPECIFIC=ANDROID_METERED!\n", "line 1: VENDOR_SPECIFIC: not hex at digit 1"),
        ("ADDRESS=1.2.3.4\ngarbage\n", "line 2: no '=' (expected KEY=VALUE)"),
        ("ADDRESS=1.2.3.4\n\u{01}\u{02}=x\n", "line 2: control characters, not a lease file"),
        ("", "empty file"),
        ("  \n\n", "empty file"),
        (#"{"Vendor_Specific":"414e"#, "not valid JSON: unexpected end at byte 24"),
        (#"{"Vendor_Specific":12}"#, "Vendor_Specific is not a string"),
        (#"{"Vendor_Specific":"41x"}"#, "Vendor_Specific: odd number of hex digits"),
        (#"{"Vendor_Specific":"zz"}"#, "Vendor_Specific: not hex at digit 1"),
        (#"{"Address":[1,2,3,4],"Address":[5,6,7,8]}"#, #"not valid JSON: duplicate key "Address" at byte 21"#),
        // Neither form: JSON that is not an object reads as key=value text without '='.
        ("[1,2]\n", "line 1: no '=' (expected KEY=VALUE)"),
    ])
    func badFilesSayWhatIsWrong(text: String, problem: String) {
        #expect {
            _ = try DHCPLease.parse(Array(text.utf8))
        } throws: { error in
            (error as? DHCPLease.ParseError)?.problem == problem
        }
    }

    @Test func hugeFileIsRefusedUnread() {
        let huge = [UInt8](repeating: UInt8(ascii: "A"), count: DHCPLease.maximumSize + 1)
        #expect(throws: DHCPLease.ParseError("\(DHCPLease.maximumSize + 1) bytes, more than a lease file has (at most \(DHCPLease.maximumSize))")) {
            _ = try DHCPLease.parse(huge)
        }
        // At the limit it is read: a long line of hex is still a lease.
        let vendor = String(repeating: "41", count: (DHCPLease.maximumSize - 17) / 2)
        let largest = "VENDOR_SPECIFIC=\(vendor)\n"
        #expect(largest.utf8.count <= DHCPLease.maximumSize)
        #expect(throws: Never.self) { _ = try DHCPLease.parse(Array(largest.utf8)) }
    }

    @Test func deepJSONIsRefused() {
        let deep = "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect(throws: DHCPLease.ParseError.self) { _ = try DHCPLease.parse(Array(deep.utf8)) }
    }
}

struct CostConfigurationTests {
    @Test func keysParse() throws {
        var config = try ReachdConfiguration.parse("""
            [Interfaces]
            Metered=usb0
            NotMetered=wlan* enx*
            Constrained=eth* wwan0
            LeaseDirectory=/tmp/leases
            """, file: "r.conf")
        #expect(config.interfaces.notMetered == ["wlan*", "enx*"])
        #expect(config.interfaces.constrained == ["eth*", "wwan0"])
        #expect(config.interfaces.leaseDirectory == "/tmp/leases")
        config = try ReachdConfiguration.parse("[Interfaces]\nLeaseDirectory=\nNotMetered=\n", file: "d.conf", into: config)
        #expect(config.interfaces.leaseDirectory == "/run/systemd/netif/leases")
        #expect(config.interfaces.notMetered.isEmpty)
    }

    @Test func relativeLeaseDirectoryIsRefused() {
        #expect {
            _ = try ReachdConfiguration.parse("[Interfaces]\nLeaseDirectory=leases\n", file: "r.conf")
        } throws: { error in
            "\(error)" == "r.conf:2: [Interfaces] LeaseDirectory=leases: bad path (must be absolute)"
        }
    }

    /// Configuration overrides what the network guessed; `Metered=` wins over `NotMetered=`.
    @Test(arguments: [
        ("wlan0", false, false), ("wlan0", true, true),
        ("usb0", false, true), ("usb0", true, true),
        ("wlan1", true, false), ("wlan1", false, false),
        ("wlan9", true, true),
    ])
    func overridesTheGuess(name: String, guessed: Bool, metered: Bool) {
        var interfaces = ReachdConfiguration.InterfacesSection()
        interfaces.metered = ["usb*", "wlan9"]
        interfaces.notMetered = ["wlan1", "wlan9"]
        #expect(interfaces.isMetered(name, guessed: guessed) == metered)
    }
}

struct ConstrainedStatusTests {
    private func snapshot(constrained: Set<Int>) -> NetworkSnapshot {
        var table = KernelStateTable()
        table.apply(.link(LinkFacts(index: 2, name: "eth0", up: true, carrier: true, operstate: "up")))
        table.apply(.addressAdded(AddressState(ifindex: 2, family: .ipv4, address: "192.0.2.10", prefixLength: 24)))
        table.apply(.routeAdded(RouteState(family: .ipv4, gateway: "192.0.2.1", oif: 2, metric: 100), replace: false))
        return table.snapshot(kinds: [2: .ethernet], constrained: constrained)
    }

    @Test func thePrimarysLowDataModeIsTheStatuss() {
        let on = Classifier.classify(snapshot(constrained: [2]), since: Date(timeIntervalSince1970: 0))
        let off = Classifier.classify(snapshot(constrained: []), since: Date(timeIntervalSince1970: 0))
        #expect(on.reachable && on.constrained)
        #expect(off.reachable && !off.constrained)
        #expect(on.changes(from: off) == [.constrained])
    }

    @Test func wireFormCarriesItAndOlderDaemonsMeanFalse() throws {
        var status = Status.initial(since: Date(timeIntervalSince1970: 0))
        status.constrained = true
        let json = WireJSONWriter.json(status)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""connectivityCheck":true,"constrained":true,"expensive":false"#))
        #expect(try JSONDecoder().decode(Status.self, from: Data(json)).constrained)
        // An older daemon writes no such field.
        let older = text.replacingOccurrences(of: #""constrained":true,"#, with: "")
        #expect(try JSONDecoder().decode(Status.self, from: Data(older.utf8)).constrained == false)
    }
}

struct NetworkManagerMeteredModelTests {
    private func device(_ name: String, metered: UInt32) -> DBusValue {
        .array([
            .dictEntry(.string("Interface"), .variant(.string(name))),
            .dictEntry(.string("Metered"), .variant(.uint32(metered))),
            .dictEntry(.string("State"), .variant(.uint32(100))),
        ])
    }

    private func object(_ path: String, _ interfaces: [(String, DBusValue)]) -> DBusValue {
        .dictEntry(.objectPath(path), .array(interfaces.map { .dictEntry(.string($0.0), $0.1) }))
    }

    private let deviceInterface = NetworkManagerDBus.deviceInterface

    /// NMMetered: yes (1) and guess-yes (3) are metered; unknown, no and guess-no are not.
    @Test func managedObjectsTellWhichAreMetered() {
        var model = NetworkManagerMeteredModel()
        let reply: [DBusValue] = [.array([
            object("/org/freedesktop/NetworkManager/Devices/1", [(deviceInterface, device("lo", metered: 0))]),
            object("/org/freedesktop/NetworkManager/Devices/2", [(deviceInterface, device("wlan0", metered: 3))]),
            object("/org/freedesktop/NetworkManager/Devices/3", [(deviceInterface, device("eth0", metered: 4)),
                                                                 ("org.freedesktop.NetworkManager.Device.Wired", .array([]))]),
            object("/org/freedesktop/NetworkManager/Devices/4", [(deviceInterface, device("wwan0", metered: 1))]),
            object("/org/freedesktop/NetworkManager/Devices/5", [(deviceInterface, device("usb0", metered: 2))]),
            object("/org/freedesktop/NetworkManager/Settings/1", [("org.freedesktop.NetworkManager.Settings.Connection", .array([]))]),
        ])]
        do { let applied = model.apply(managedObjects: reply); #expect(applied) }
        #expect(model.meteredInterfaces == ["wlan0", "wwan0"])
    }

    @Test func signalsFollowTheDevices() {
        var model = NetworkManagerMeteredModel()
        model.apply(managedObjects: [.array([object("/org/freedesktop/NetworkManager/Devices/2",
                                                     [(deviceInterface, device("wlan0", metered: 4))])])])
        #expect(model.meteredInterfaces.isEmpty)
        // A hotspot's lease: NetworkManager's guess turns to guess-yes.
        do { let applied = model.apply(signal: "PropertiesChanged", path: "/org/freedesktop/NetworkManager/Devices/2",
                            arguments: [.string(deviceInterface), .array([.dictEntry(.string("Metered"), .variant(.uint32(3)))]), .array([])]); #expect(applied) }
        #expect(model.meteredInterfaces == ["wlan0"])
        do { let applied = model.apply(signal: "InterfacesAdded", path: "/org/freedesktop",
                            arguments: [.objectPath("/org/freedesktop/NetworkManager/Devices/7"),
                                        .array([.dictEntry(.string(deviceInterface), device("usb0", metered: 1))])]); #expect(applied) }
        #expect(model.meteredInterfaces == ["usb0", "wlan0"])
        do { let applied = model.apply(signal: "InterfacesRemoved", path: "/org/freedesktop",
                            arguments: [.objectPath("/org/freedesktop/NetworkManager/Devices/2"), .array([.string(deviceInterface)])]); #expect(applied) }
        #expect(model.meteredInterfaces == ["usb0"])
        // Another interface's properties, and an unknown device's, change nothing.
        do { let applied = model.apply(signal: "PropertiesChanged", path: "/org/freedesktop/NetworkManager/Devices/7",
                            arguments: [.string("org.freedesktop.NetworkManager.Device.Statistics"),
                                        .array([.dictEntry(.string("Metered"), .variant(.uint32(2)))]), .array([])]); #expect(applied) }
        do { let applied = model.apply(signal: "PropertiesChanged", path: "/org/freedesktop/NetworkManager/Devices/9",
                            arguments: [.string(deviceInterface), .array([.dictEntry(.string("Metered"), .variant(.uint32(1)))]), .array([])]); #expect(applied) }
        #expect(model.meteredInterfaces == ["usb0"])
    }

    @Test func garbageIsNoMeteredInterface() {
        var model = NetworkManagerMeteredModel()
        model.apply(managedObjects: [.array([object("/d/1", [(deviceInterface, device("wlan0", metered: 1))])])])
        do { let applied = model.apply(managedObjects: [.string("nonsense")]); #expect(!applied) }
        #expect(model.meteredInterfaces.isEmpty)
        do { let applied = model.apply(signal: "PropertiesChanged", path: "/d/1", arguments: [.uint32(1)]); #expect(!applied) }
        // A Metered of the wrong type is no answer.
        model.apply(managedObjects: [.array([object("/d/1", [(deviceInterface, .array([
            .dictEntry(.string("Interface"), .variant(.string("wlan0"))), .dictEntry(.string("Metered"), .variant(.string("yes"))),
        ]))])])])
        #expect(model.meteredInterfaces.isEmpty)
    }
}
