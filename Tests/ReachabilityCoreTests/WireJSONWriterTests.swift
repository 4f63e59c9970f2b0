import Foundation
import Testing
@testable import ReachabilityCore

/// `WireJSONWriter` must put on the wire exactly what the `Codable` encoding (`WireJSON.encoder()`)
/// did: the same bytes, hence the same values once decoded, every field present.
@Suite struct WireJSONWriterTests {
    /// Strings that need escaping, or tempt a writer to escape what it should not.
    static let awkward: [String] = [
        "", "plain", "with \"quotes\"", #"back\slash"#, "C:\\dir\\", "/slash/es/", "tab\tnew\nline\rcr",
        "\u{8}\u{c}", "\u{0}nul", String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }),
        "\u{7f}del", "é ü ß", "日本語", "emoji 😀👍🏽", "\u{2028}\u{2029}", "\u{FEFF}bom", "mix \"\\\u{1}/é\u{1f}",
    ]

    static func interface(_ name: String, index: Int, kind: InterfaceKind = .ethernet, addresses: [String]? = nil,
                          operstate: String = "up", up: Bool = true, carrier: Bool = true, metered: Bool = false) -> Interface {
        Interface(name: name, index: index, kind: kind, up: up, carrier: carrier, operstate: operstate,
                  addresses: addresses ?? ["10.0.\(index).2/24", "fd00:\(index)::2/64"], metered: metered,
                  dns: index % 2 == 0 ? ["2001:db8::53", "2001:db8::\(index)"] : [],
                  searchDomains: index % 3 == 0 ? ["corp.example", name] : [],
                  nat64Prefix: index % 2 == 0 ? "64:ff9b::/96" : nil,
                  captivePortalApi: index % 4 == 0 ? "https://10.0.\(index).1:8443/capport?\"\(name)\"" : nil,
                  linkQuality: abs(index) % 5 == 4 ? nil : qualities[abs(index) % qualities.count],
                  stall: abs(index) % 3 == 1 ? DataStall(since: date, method: .tcp, failRate: 0.9375, sentSinceReceive: 16,
                                                         periodMs: 10_000, recent: [
                                                             DataStall.Dump(at: date, periodMs: 9_999, sent: 16, received: 0, retransmitted: 15),
                                                         ]) : nil,
                  wifi: abs(index) % 3 == 0 ? nil : wifis[abs(index) % wifis.count])
    }

    /// Wi-Fi connections with every optional nil and set, every band and owner, awkward names.
    static let wifis: [WiFi] = [
        WiFi(ssid: "cafe", bssid: "02:11:22:33:44:55", frequencyMHz: 5180, band: .band5GHz, signalDbm: -61, strengthPercent: 71,
             bars: 3, txBitrateKbps: 866_700, owner: .iwd),
        WiFi(owner: .networkManager),
        WiFi(ssid: WiFiSSID(bytes: [0x48, 0x1b, 0xff, 0x22, 0x5c]).display, frequencyMHz: 2437, band: .band2_4GHz,
             strengthPercent: 0, bars: 0, owner: .wpaSupplicant),
        WiFi(ssid: "", bssid: nil, frequencyMHz: 6115, band: .band6GHz, signalDbm: -126, strengthPercent: 30, bars: 0,
             txBitrateKbps: 1, owner: .nl80211),
    ]

    /// Link qualities with every optional nil and set, every enum value, awkward numbers.
    static let qualities: [LinkQuality] = [
        LinkQuality(level: .good, effectiveType: .fourG, rttMs: 48.5, minRttMs: 31, downlinkKbps: 12_345.678,
                    lossPercent: 0.25, samples: 17, source: .passive, measuredAt: date),
        LinkQuality(level: .unknown, source: .default, measuredAt: Date(timeIntervalSince1970: 0)),
        LinkQuality(level: .minimal, effectiveType: .slow2g, rttMs: 2500, samples: 1, source: .radio, measuredAt: date,
                    stale: true, signal: RadioSignal(technology: "lte", rssi: -71, rsrp: -125.5, rsrq: -19, snr: -3.25, level: 0)),
        LinkQuality(level: .moderate, effectiveType: .threeG, rttMs: 1e-5, minRttMs: 0, downlinkKbps: 0, lossPercent: 100,
                    samples: Int.max, source: .probe, measuredAt: date.addingTimeInterval(0.0004),
                    signal: RadioSignal(technology: "gsm\"\\", level: 4)),
        LinkQuality(level: .minimal, effectiveType: .twoG, rttMs: 1_300.333333333333, lossPercent: 12.5, samples: 3,
                    source: .passive, measuredAt: date),
    ]

    static let date = Date(timeIntervalSince1970: 1_800_000_000.123)

    static let probes: [Probe] = [
        Probe(url: "http://10.0.0.1/generate_204", result: .full, httpStatus: 204, rttMs: 18.2, portalUrl: nil, error: nil, checkedAt: date),
        Probe(url: "http://a/b?c=d&e=\"f\"", result: .portal, httpStatus: 302, rttMs: 5.0,
              portalUrl: "http://portal.example/login?next=/x\\y", error: nil, checkedAt: date.addingTimeInterval(0.0004)),
        Probe(url: "http://x/", result: .limited, httpStatus: nil, rttMs: nil, portalUrl: nil,
              error: "connect: Connection refused\n\"errno\" 111", checkedAt: Date(timeIntervalSince1970: 0)),
        Probe(url: "", result: .unknown, checkedAt: Date(timeIntervalSince1970: 1_780_000_000.9996)),
        Probe(url: "u", result: .none, httpStatus: 0, rttMs: 0, portalUrl: "", error: "", checkedAt: date),
        Probe(url: "u", result: .full, httpStatus: -1, rttMs: 1e-5, checkedAt: date),
        Probe(url: "u", result: .full, httpStatus: 599, rttMs: 123_456.789, checkedAt: date),
        Probe(url: "u", result: .full, rttMs: 33.333333333333336, checkedAt: date),
        Probe(url: "u", result: .full, rttMs: 1e21, checkedAt: date),
        Probe(url: "u", result: .full, rttMs: 2.5e-7, checkedAt: date),
        Probe(url: "https://10.0.0.1:8443/capport", result: .portal, httpStatus: 200, rttMs: 3.5, portalUrl: "https://p/login",
              checkedAt: date, venueInfoUrl: "https://p/venue \"x\"", secondsRemaining: 326, bytesRemaining: 65536,
              canExtendSession: true, source: "ra"),
        Probe(url: "u", result: .full, checkedAt: date, secondsRemaining: 0, bytesRemaining: Int.max, canExtendSession: false, source: ""),
    ]

    static let cellulars: [Cellular] = [
        Cellular(generation: "4G", accessTechnology: "lte", modem: "/org/freedesktop/ModemManager1/Modem/0",
                 interface: "wwan0", signalQuality: 71, roaming: false),
        Cellular(generation: nil, accessTechnology: nil, modem: "/org/freedesktop/ModemManager1/Modem/1",
                 interface: nil, signalQuality: nil, roaming: nil),
        Cellular(generation: "5G", accessTechnology: "5gnr", modem: "/m\"odem\\", interface: "wwan\t1",
                 signalQuality: 0, roaming: true),
        Cellular(generation: "2G", accessTechnology: "edge", modem: "", interface: "", signalQuality: 100, roaming: nil),
    ]

    /// Statuses covering every optional nil and non-nil, empty and full arrays, every enum value
    /// and the awkward strings.
    static var statuses: [Status] {
        var result: [Status] = [Status.initial(since: date), Status.initial(since: Date(timeIntervalSince1970: 0))]
        let eth = interface("eth0", index: 2)
        var online = Status(status: .ethernet, reachable: true, connectivity: .full, primary: eth, vpn: nil,
                            cellular: nil, expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.2.1"],
                            flags: [.reachable], interfaces: [interface("lo", index: 1, kind: .loopback, addresses: ["127.0.0.1/8"]), eth],
                            probe: probes[0], since: date)
        result.append(online)
        for (i, kind) in NetworkStatus.allCases.enumerated() {
            var s = online
            s.status = kind
            s.connectivity = Connectivity.allCases[i % Connectivity.allCases.count]
            s.flags = Array(ReachabilityFlag.allCases.prefix(i % (ReachabilityFlag.allCases.count + 1)))
            s.expensive = i % 2 == 0; s.ipv4 = i % 3 == 0; s.ipv6 = i % 2 == 1; s.reachable = i % 4 != 0
            s.simulated = i % 3 == 1
            s.since = date.addingTimeInterval(Double(i) * 86_400.0371)
            result.append(s)
        }
        for (i, kind) in InterfaceKind.allCases.enumerated() {
            var s = online
            s.primary = interface("if\(i)", index: i + 100, kind: kind, addresses: [], operstate: "dormant",
                                  up: i % 2 == 0, carrier: i % 3 == 0, metered: i % 2 == 1)
            s.interfaces = [s.primary].compactMap { $0 }
            result.append(s)
        }
        for (i, probe) in probes.enumerated() {
            var s = online
            s.probe = probe
            s.cellular = cellulars[i % cellulars.count]
            s.vpn = i % 2 == 0 ? interface("tun0", index: 9, kind: .vpn, addresses: ["10.8.0.2/32"]) : nil
            s.linkQuality = i % 6 == 5 ? nil : qualities[i % qualities.count]
            result.append(s)
        }
        for (i, text) in awkward.enumerated() {
            var s = online
            let odd = interface(text, index: -i, kind: .other, addresses: [text, "\(text)/24"], operstate: text)
            s.primary = odd; s.vpn = odd; s.interfaces = [odd, eth]
            s.gateways = [text, text]
            s.cellular = Cellular(generation: text, accessTechnology: text, modem: text, interface: text,
                                  signalQuality: i, roaming: i % 2 == 0)
            s.probe = Probe(url: text, result: .portal, httpStatus: 302, rttMs: Double(i) / 7,
                            portalUrl: text, error: text, checkedAt: date)
            result.append(s)
        }
        online.interfaces = (0..<40).map { interface("veth\($0)", index: 1000 + $0) }
        online.gateways = ["10.0.0.1", "fe80::1", "2001:db8::1"]
        result.append(online)
        return result
    }

    static var events: [ReachabilityEvent] {
        let statuses = statuses
        var result: [ReachabilityEvent] = []
        for (i, current) in statuses.enumerated() {
            let code = Reason.Code.allCases[i % Reason.Code.allCases.count]
            let text = awkward[i % awkward.count]
            let reason = Reason(code: code, interface: i % 3 == 0 ? nil : text, detail: i % 2 == 0 ? nil : text)
            let previous = i % 4 == 0 ? nil : statuses[(i + 7) % statuses.count]
            let sequence = [0, 1, 1_800_000_000_123, -5, Int.max, Int.min][i % 6] + (i % 6 == 4 || i % 6 == 5 ? 0 : i)
            result.append(ReachabilityEvent(sequence: sequence, timestamp: date.addingTimeInterval(Double(i) * 3.0007),
                                            event: previous == nil ? .initial : .reachabilityChanged,
                                            reason: reason, previous: previous, current: current))
        }
        return result
    }

    func codable<T: Encodable>(_ value: T) throws -> [UInt8] {
        Array(try WireJSON.encoder().encode(value))
    }

    @Test func statusBytesAreTheCodableEncoding() throws {
        for (i, status) in Self.statuses.enumerated() {
            let written = WireJSONWriter.json(status)
            let expected = try codable(status)
            #expect(written == expected, "status \(i): \(String(decoding: written, as: UTF8.self))\n vs \(String(decoding: expected, as: UTF8.self))")
            // And decoded: the same values as the Codable round trip.
            let decoded = try WireJSON.decoder().decode(Status.self, from: Data(written))
            #expect(decoded == (try WireJSON.decoder().decode(Status.self, from: Data(expected))), "status \(i)")
        }
    }

    @Test func eventBytesAreTheCodableEncoding() throws {
        for (i, event) in Self.events.enumerated() {
            let written = WireJSONWriter.json(event)
            let expected = try codable(event)
            #expect(written == expected, "event \(i): \(String(decoding: written, as: UTF8.self))\n vs \(String(decoding: expected, as: UTF8.self))")
            let decoded = try WireJSON.decoder().decode(ReachabilityEvent.self, from: Data(written))
            #expect(decoded == (try WireJSON.decoder().decode(ReachabilityEvent.self, from: Data(expected))), "event \(i)")
        }
    }

    /// Splicing in the already-written `previous`/`current` gives the same bytes.
    @Test func splicedStatusesGiveTheSameEvent() throws {
        for (i, event) in Self.events.enumerated() {
            let spliced = WireJSONWriter.json(event, previousJSON: event.previous.map { WireJSONWriter.json($0) },
                                              currentJSON: WireJSONWriter.json(event.current))
            #expect(spliced == WireJSONWriter.json(event), "event \(i)")
        }
    }

    /// Every field of every object is there, `null` for an absent optional.
    @Test func everyFieldIsPresent() throws {
        let statusKeys: Set<String> = ["status", "reachable", "connectivity", "primary", "vpn", "cellular", "expensive",
                                       "ipv4", "ipv6", "gateways", "gatewaysOmitted", "flags", "interfaces", "probe", "since",
                                       "simulated", "routing", "ipv4Connectivity", "ipv6Connectivity", "connectivityCheck",
                                       "linkQuality", "constrained"]
        let interfaceKeys: Set<String> = ["name", "index", "kind", "up", "carrier", "operstate", "addresses", "metered",
                                          "dns", "searchDomains", "nat64Prefix", "captivePortalApi", "connectivity", "linkQuality",
                                          "stall", "wifi"]
        let stallKeys: Set<String> = ["since", "method", "failRate", "sentSinceReceive", "periodMs", "recent"]
        let wifiKeys: Set<String> = ["ssid", "bssid", "frequencyMHz", "band", "signalDbm", "strengthPercent", "bars",
                                     "txBitrateKbps", "owner"]
        let qualityKeys: Set<String> = ["level", "effectiveType", "rttMs", "minRttMs", "downlinkKbps", "lossPercent",
                                        "samples", "source", "measuredAt", "stale", "signal"]
        let signalKeys: Set<String> = ["technology", "rssi", "rsrp", "rsrq", "snr", "level"]
        let cellularKeys: Set<String> = ["generation", "accessTechnology", "modem", "interface", "signalQuality", "roaming"]
        let probeKeys: Set<String> = ["url", "result", "httpStatus", "rttMs", "portalUrl", "error", "checkedAt",
                                      "venueInfoUrl", "secondsRemaining", "bytesRemaining", "canExtendSession", "source",
                                      "failedStage", "ipv4Result", "ipv6Result", "nat64"]
        let routePathKeys: Set<String> = ["family", "destination", "result", "rule", "table", "interface", "gateway"]
        func check(_ value: JSONValue?, _ keys: Set<String>, nullable: Bool, _ what: String) {
            guard let value else { Issue.record("\(what): missing"); return }
            if nullable && value.isNull { return }
            guard let object = value.objectValue else { Issue.record("\(what): not an object"); return }
            #expect(Set(object.keys) == keys, "\(what)")
        }
        func checkQuality(_ value: JSONValue?, _ what: String) {
            check(value, qualityKeys, nullable: true, what)
            guard let quality = value?.objectValue else { return }
            check(quality["signal"], signalKeys, nullable: true, "\(what).signal")
        }
        func checkStatus(_ value: JSONValue?, nullable: Bool, _ what: String) {
            check(value, statusKeys, nullable: nullable, what)
            guard let object = value?.objectValue else { return }
            check(object["primary"], interfaceKeys, nullable: true, "\(what).primary")
            checkQuality(object["linkQuality"], "\(what).linkQuality")
            if let primary = object["primary"]?.objectValue { checkQuality(primary["linkQuality"], "\(what).primary.linkQuality") }
            for (i, path) in (object["routing"]?.arrayValue ?? []).enumerated() {
                check(path, routePathKeys, nullable: false, "\(what).routing[\(i)]")
            }
            check(object["vpn"], interfaceKeys, nullable: true, "\(what).vpn")
            check(object["cellular"], cellularKeys, nullable: true, "\(what).cellular")
            check(object["probe"], probeKeys, nullable: true, "\(what).probe")
            var interfaces: [JSONValue] = []
            if case .array(let list)? = object["interfaces"] { interfaces = list } else { Issue.record("\(what).interfaces: not an array") }
            for (i, interface) in interfaces.enumerated() {
                check(interface, interfaceKeys, nullable: false, "\(what).interfaces[\(i)]")
                check(interface.objectValue?["stall"], stallKeys, nullable: true, "\(what).interfaces[\(i)].stall")
                checkQuality(interface.objectValue?["linkQuality"], "\(what).interfaces[\(i)].linkQuality")
                check(interface.objectValue?["wifi"], wifiKeys, nullable: true, "\(what).interfaces[\(i)].wifi")
            }
        }
        var sawNull = Set<String>(), sawValue = Set<String>()
        for (i, event) in Self.events.enumerated() {
            let value = try JSONValue(parsing: WireJSONWriter.json(event))
            check(value, ["sequence", "timestamp", "event", "reason", "previous", "current", "changes"], nullable: false, "event \(i)")
            guard let object = value.objectValue else { continue }
            check(object["reason"], ["code", "interface", "detail"], nullable: false, "event \(i).reason")
            checkStatus(object["previous"], nullable: true, "event \(i).previous")
            checkStatus(object["current"], nullable: false, "event \(i).current")
            // Note which optionals were seen null and non-null, so the table covers both.
            for (key, field) in object["current"]?.objectValue ?? [:] { if field.isNull { sawNull.insert(key) } else { sawValue.insert(key) } }
            for (key, field) in object["current"]?.objectValue?["probe"]?.objectValue ?? [:] { if field.isNull { sawNull.insert("probe." + key) } else { sawValue.insert("probe." + key) } }
            for (key, field) in object["current"]?.objectValue?["cellular"]?.objectValue ?? [:] { if field.isNull { sawNull.insert("cellular." + key) } else { sawValue.insert("cellular." + key) } }
            for (key, field) in object["current"]?.objectValue?["linkQuality"]?.objectValue ?? [:] { if field.isNull { sawNull.insert("linkQuality." + key) } else { sawValue.insert("linkQuality." + key) } }
            for (key, field) in object["reason"]?.objectValue ?? [:] { if field.isNull { sawNull.insert("reason." + key) } else { sawValue.insert("reason." + key) } }
            if object["previous"]?.isNull == true { sawNull.insert("previous") } else { sawValue.insert("previous") }
        }
        let optionals: Set<String> = ["primary", "vpn", "cellular", "probe", "previous",
                                      "probe.httpStatus", "probe.rttMs", "probe.portalUrl", "probe.error",
                                      "cellular.generation", "cellular.accessTechnology", "cellular.interface",
                                      "cellular.signalQuality", "cellular.roaming", "reason.interface", "reason.detail",
                                      "linkQuality", "linkQuality.effectiveType", "linkQuality.rttMs", "linkQuality.minRttMs",
                                      "linkQuality.downlinkKbps", "linkQuality.lossPercent", "linkQuality.signal"]
        #expect(optionals.isSubset(of: sawNull), "never null: \(optionals.subtracting(sawNull))")
        #expect(optionals.isSubset(of: sawValue), "never set: \(optionals.subtracting(sawValue))")
    }

    @Test(arguments: WireJSONWriterTests.awkward)
    func stringsRoundTrip(text: String) throws {
        var writer = WireJSONWriter()
        writer.string(text)
        #expect(writer.bytes == (try codable(text)))
        #expect(try JSONDecoder().decode(String.self, from: Data(writer.bytes)) == text)
        // RFC 8259: no raw control character inside a string.
        #expect(!writer.bytes.contains { $0 < 0x20 })
    }

    /// The writer's memory grows as it fills, from the smallest start, whatever the pieces' sizes;
    /// what comes out is every piece in order.
    @Test func growsPastItsCapacityKeepingEveryByte() throws {
        var writer = WireJSONWriter(capacity: 0)
        var expected: [UInt8] = []
        var generator = SystemRandomNumberGenerator()
        for round in 0..<400 {
            let text = String(repeating: round % 7 == 0 ? "é\"\n" : "eth\(round)", count: Int.random(in: 0...300, using: &generator))
            writer.string(text)
            expected += try codable(text)
            writer.byte(UInt8(ascii: ","))
            expected.append(UInt8(ascii: ","))
            writer.int(round)
            expected += Array(String(round).utf8)
        }
        #expect(writer.bytes == expected)
        #expect(writer.data == Data(expected))
        #expect(expected.count > 100_000)
    }

    @Test(arguments: [0, 1, -1, 9, 10, 42, -42, 1_800_000_000_123, Int.max, Int.min, Int(Int32.max), 100_000])
    func integers(value: Int) throws {
        var writer = WireJSONWriter()
        writer.int(value)
        #expect(writer.bytes == Array(String(value).utf8))
        #expect(writer.bytes == (try codable(value)))
    }

    @Test func nonFiniteDoublesAreNull() {
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = WireJSONWriter()
            writer.double(value)
            #expect(writer.bytes == Array("null".utf8))
        }
    }

    /// The timestamps agree with `Timestamp.string(from:)` (Foundation's formatter) to the
    /// millisecond, truncation included, over a century of random instants and the edges.
    @Test func timestampsMatchTheFormatter() {
        var generator = SystemRandomNumberGenerator()
        var instants: [Double] = [0, -0.0005, -1.5, -86_400, 951_782_400, 951_868_799.9999, 4_102_444_799.999,
                                  1_780_000_000.1239, 1_780_000_000.9996, 1.0005, 1.0015, 253_402_300_799.999,
                                  -62_135_596_800, 1e12, -1e12]
        for _ in 0..<20_000 { instants.append(Double.random(in: 0..<4_102_444_800, using: &generator)) }
        for _ in 0..<20_000 {
            instants.append(Double(Int.random(in: 946_684_800_000..<4_102_444_800_000, using: &generator)) / 1000
                            + Double(Int.random(in: -2...2, using: &generator)) * 1e-7)
        }
        var mismatches = 0
        for t in instants {
            let date = Date(timeIntervalSince1970: t)
            var writer = WireJSONWriter()
            writer.timestamp(date)
            let expected = "\"" + Timestamp.string(from: date) + "\""
            if writer.bytes != Array(expected.utf8) {
                mismatches += 1
                if mismatches < 5 { Issue.record("\(t): \(String(decoding: writer.bytes, as: UTF8.self)) vs \(expected)") }
            }
        }
        #expect(mismatches == 0)
    }
}
