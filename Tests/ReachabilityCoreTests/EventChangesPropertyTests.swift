import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// The tracker's events against an oracle written from the protocol's words, not from
/// `Status.changes(from:)`: an event's `changes` is exactly the set of top-level fields of the
/// Status object whose JSON differs between `previous` and `current`, once the figures that make
/// no event are set aside (`since`; of `probe` all but `result` and `portalUrl`; of a quality all
/// but `level` and `effectiveType`, and a path interface's quality, which `linkQuality` reports).
/// Every reason names a cause: with no reason forced, never `resync`; when only measured quality
/// moved, `qualityChanged`.
@Suite struct EventChangesPropertyTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let eth0 = 2, eth1 = 3, wwan0 = 4
    static let names = [eth0: "eth0", eth1: "eth1", wwan0: "wwan0"]

    /// The world the tracker classifies: three uplinks whose links, addresses, routes,
    /// verdicts, qualities and modem change at random.
    struct World {
        var snapshot = NetworkSnapshot()
        var qualities: [Int: LinkQuality] = [:]
        var measuring = true
        var now = EventChangesPropertyTests.t0
        var op = 0

        init() {
            for (index, name) in EventChangesPropertyTests.names {
                snapshot.links[index] = LinkState(index: index, name: name, kind: index == EventChangesPropertyTests.wwan0 ? .wwan : .ethernet,
                                                  up: true, carrier: false, operstate: "lowerlayerdown")
            }
        }
    }

    /// One random step; `forced` is the reason the monitor forces for such a change (none for
    /// the kernel, the modems, the primary's verdict and the measured qualities).
    static func step(_ world: inout World, _ random: inout SplitMix64) -> Reason? {
        let indexes = [eth0, eth1, wwan0]
        let index = indexes[Int(random.next() % 3)]
        world.now = world.now.addingTimeInterval(Double(random.next() % 5000) / 1000)
        let op = Int(random.next() % 13)
        world.op = op * 10 + index
        switch op {
        case 0, 1:
            guard var link = world.snapshot.links[index] else { return nil }
            link.carrier.toggle()
            link.operstate = link.carrier ? "up" : "lowerlayerdown"
            world.snapshot.links[index] = link
        case 2:
            world.snapshot.links[index]?.up.toggle()
        case 3:
            let v6 = random.next() % 2 == 0
            let address = v6 ? AddressState(ifindex: index, family: .ipv6, address: "2001:db8:\(index)::2", prefixLength: 64)
                             : AddressState(ifindex: index, family: .ipv4, address: "10.\(index).0.2", prefixLength: 24)
            if world.snapshot.addresses.contains(address) { world.snapshot.addresses.remove(address) } else { world.snapshot.addresses.insert(address) }
        case 4:
            let v6 = random.next() % 2 == 0
            let route = v6 ? RouteState(family: .ipv6, gateway: "fe80::\(index)", oif: index, metric: UInt32(100 * index))
                           : RouteState(family: .ipv4, gateway: "10.\(index).0.1", oif: index, metric: UInt32(100 * index))
            if world.snapshot.routes.contains(route) { world.snapshot.routes.remove(route) } else { world.snapshot.routes.insert(route) }
        case 5, 6:
            // The primary's verdict, about the path the status has now (or an old one).
            let results: [Connectivity] = [.full, .full, .portal, .limited]
            let result = results[Int(random.next() % 4)]
            let status = Classifier.classify(world.snapshot, since: world.now)
            let probe = Probe(url: "http://127.0.0.1/", result: result, httpStatus: result == .full ? 204 : nil,
                              rttMs: Double(random.next() % 3000), portalUrl: result == .portal ? "http://login/\(random.next() % 2)" : nil,
                              checkedAt: world.now)
            world.snapshot.setVerdict(random.next() % 5 == 0 ? nil : probe, path: ProbePath(status))
        case 7, 8:
            // The estimator's figures: a class, new figures of the same class, or none.
            let levels: [(LinkQuality.Level, LinkQuality.EffectiveType?)] = [(.good, .fourG), (.moderate, .threeG), (.minimal, .twoG), (.unknown, nil)]
            let pick = levels[Int(random.next() % 4)]
            if random.next() % 6 == 0 {
                world.qualities[index] = nil
            } else {
                world.qualities[index] = LinkQuality(level: pick.0, effectiveType: pick.1, rttMs: Double(random.next() % 2000),
                                                     samples: Int(random.next() % 50), source: .passive, measuredAt: world.now)
            }
        case 9:
            let technologies: [UInt32] = [0, 1 << 14, 1 << 5, 1 << 1]
            world.snapshot.modems = random.next() % 4 == 0 ? [] : [
                ModemState(path: "/org/freedesktop/ModemManager1/Modem/0", interfaces: ["wwan0"],
                           accessTechnologies: technologies[Int(random.next() % 4)], signalQuality: Int(random.next() % 101))]
        case 11:
            // What eth1's Wi-Fi owner reports: another network, access point, signal, or none.
            let old = world.snapshot.wifi
            let bssids = [WiFiBSSID("02:00:00:00:00:01"), WiFiBSSID("02:00:00:00:00:02")]
            let dbms: [Double] = [-50, -52, -70, -71, -90, .nan]
            let ssid = WiFiSSID(["cafe", "home"][Int(random.next() % 2)])
            switch random.next() % 4 {
            case 0: world.snapshot.wifi = []
            case 1: world.snapshot.wifi = [WiFiDevice(interface: "eth1", owner: .iwd, state: .disconnected)]
            default:
                let station = WiFiStation(owner: random.next() % 2 == 0 ? .iwd : .networkManager, ssid: ssid,
                                          bssid: bssids[Int(random.next() % 2)], frequencyMHz: [2412, 5180][Int(random.next() % 2)],
                                          signalDbm: dbms[Int(random.next() % 6)])
                world.snapshot.wifi = [WiFiDevice(interface: "eth1", owner: station.owner, state: .connected, station: station)]
            }
            return MonitorScheduler.wifiReason(from: old, to: world.snapshot.wifi)
        case 10:
            // A standby uplink's verdict: the monitor names it.
            let results: [Connectivity] = [.full, .limited]
            let probe = Probe(url: "http://127.0.0.1/", result: results[Int(random.next() % 2)], rttMs: 12, checkedAt: world.now)
            if random.next() % 3 == 0 { world.snapshot.standbyVerdicts[index] = nil } else { world.snapshot.standbyVerdicts[index] = probe }
            return Reason(code: .probeResult, interface: names[index], detail: "standby uplink")
        default:
            // A reload: the check or the measuring turned on or off, a link's metered flag.
            switch random.next() % 3 {
            case 0: world.snapshot.connectivityCheck.toggle()
            case 1: world.measuring.toggle()
            default: world.snapshot.links[index]?.metered.toggle()
            }
            return Reason(code: .configReloaded)
        }
        return nil
    }

    @Test(arguments: 0..<24)
    func changesAreTheFieldsThatDiffer(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 17)
        var world = World()
        var tracker = StatusTracker(now: Self.t0)
        var events = 0
        for stepNumber in 0..<400 {
            let forced = Self.step(&world, &random)
            var snapshot = world.snapshot
            snapshot.measuresQuality = world.measuring
            snapshot.linkQualities = world.measuring ? world.qualities : [:]
            tracker.takeLinkQualities(snapshot.linkQualities, measuring: world.measuring)
            guard case .emit(let event) = tracker.update(snapshot, reason: forced, now: world.now) else { continue }
            events += 1
            let previous = try #require(event.previous)
            let expected = try Self.oracle(previous, event.current)
            let context = "seed \(seed) step \(stepNumber) reason \(event.reason.code) after step kind \(world.op / 10)"
            #expect(event.changes == expected.sorted(), "\(context)")
            #expect(!event.changes.isEmpty, "\(context)")
            if forced == nil {
                #expect(event.reason.code != .resync, "\(context): changes \(event.changes)")
            }
            // A class moved by a sample (the estimator's figures, a check's RTT) is named so; a
            // kernel or modem change that moved a guess is named by that change.
            let measured: Set<String> = ["linkQuality", "interfaces"]
            let sampled = (50..<90).contains(world.op)
            if forced == nil, sampled, Set(expected).isSubset(of: measured), try Self.onlyQualityMoved(previous, event.current) {
                #expect(event.reason.code == .qualityChanged, "\(context)")
            }
        }
        #expect(events > 40, "seed \(seed): too few events to say anything")
    }

    /// Every field of the Status object but `since` is one that `changes` can name, so a field
    /// added later cannot be left out of the comparison.
    @Test func everyStatusFieldCanBeNamed() throws {
        var world = World()
        world.snapshot.links[Self.eth0]?.carrier = true
        world.snapshot.addresses.insert(AddressState(ifindex: Self.eth0, family: .ipv4, address: "10.2.0.2", prefixLength: 24))
        world.snapshot.routes.insert(RouteState(family: .ipv4, gateway: "10.2.0.1", oif: Self.eth0, metric: 100))
        let status = Classifier.classify(world.snapshot, since: Self.t0)
        let keys = Set(try Self.json(status).keys).subtracting(["since"])
        #expect(keys == Set(Status.Field.allCases.map(\.rawValue)))
    }

    /// The first class comes with its uplink, and a subscriber to `linkQuality` hears it.
    @Test func theFirstClassIsAChange() {
        var world = World()
        var tracker = StatusTracker(now: Self.t0)
        tracker.takeLinkQualities([:], measuring: true)
        world.snapshot.measuresQuality = true
        world.snapshot.links[Self.eth0]?.carrier = true
        world.snapshot.links[Self.eth0]?.operstate = "up"
        world.snapshot.addresses.insert(AddressState(ifindex: Self.eth0, family: .ipv4, address: "10.2.0.2", prefixLength: 24))
        _ = tracker.update(world.snapshot, now: Self.t0)
        world.snapshot.routes.insert(RouteState(family: .ipv4, gateway: "10.2.0.1", oif: Self.eth0, metric: 100))
        guard case .emit(let event) = tracker.update(world.snapshot, now: Self.t0.addingTimeInterval(1)) else {
            Issue.record("no event for the route"); return
        }
        #expect(event.reason.code == .routeAdded)
        #expect(event.previous?.linkQuality == nil)
        #expect(event.current.linkQuality != nil)
        #expect(event.changes.contains("linkQuality"))
    }

    /// A class moved by a check's RTT alone (the verdict's result unchanged) is `qualityChanged`.
    @Test func aClassMovedByACheckIsQualityChanged() {
        var world = World()
        world.snapshot.measuresQuality = true
        world.snapshot.links[Self.eth0]?.carrier = true
        world.snapshot.links[Self.eth0]?.operstate = "up"
        world.snapshot.addresses.insert(AddressState(ifindex: Self.eth0, family: .ipv4, address: "10.2.0.2", prefixLength: 24))
        world.snapshot.routes.insert(RouteState(family: .ipv4, gateway: "10.2.0.1", oif: Self.eth0, metric: 100))
        let path = ProbePath(Classifier.classify(world.snapshot, since: Self.t0))
        world.snapshot.setVerdict(Probe(url: "http://127.0.0.1/", result: .full, httpStatus: 204, rttMs: 40, checkedAt: Self.t0), path: path)
        world.snapshot.linkQualities = [Self.eth0: LinkQuality(level: .good, effectiveType: .fourG, rttMs: 20, source: .probe, measuredAt: Self.t0)]
        var tracker = StatusTracker(snapshot: world.snapshot, now: Self.t0)
        // The next check takes 1.5 s: the same verdict, a slower class.
        world.snapshot.setVerdict(Probe(url: "http://127.0.0.1/", result: .full, httpStatus: 204, rttMs: 1500, checkedAt: Self.t0), path: path)
        world.snapshot.linkQualities = [Self.eth0: LinkQuality(level: .minimal, effectiveType: .twoG, rttMs: 750, source: .probe, measuredAt: Self.t0)]
        tracker.takeLinkQualities(world.snapshot.linkQualities)
        guard case .emit(let event) = tracker.update(world.snapshot, now: Self.t0.addingTimeInterval(10)) else {
            Issue.record("no event for the class"); return
        }
        #expect(event.reason == Reason(code: .qualityChanged, interface: "eth0"))
        #expect(event.changes == ["linkQuality"])
    }

    // MARK: The oracle

    static func json(_ status: Status) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(status)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A JSON value as bytes with sorted keys: two values are equal when these are.
    static func canonical(_ value: Any) throws -> Data {
        try JSONSerialization.data(withJSONObject: ["v": value], options: [.sortedKeys])
    }

    /// A quality as an event sees it: its class, or null.
    static func shownClass(_ value: Any?) -> Any {
        guard let quality = value as? [String: Any] else { return NSNull() }
        return [quality["level"] ?? NSNull(), quality["effectiveType"] ?? NSNull()]
    }

    /// A Wi-Fi connection as an event sees it: its network, access point and bars, or null.
    static func shownWiFi(_ value: Any?) -> Any {
        guard let wifi = value as? [String: Any] else { return NSNull() }
        return [wifi["ssid"] ?? NSNull(), wifi["bssid"] ?? NSNull(), wifi["bars"] ?? NSNull()]
    }

    /// The fields whose shown values differ.
    static func oracle(_ previous: Status, _ current: Status) throws -> [String] {
        let old = try json(previous), new = try json(current)
        let pathIndexes = Set([previous.primary?.index, previous.vpn?.index, current.primary?.index, current.vpn?.index].compactMap { $0 })
        func shown(_ key: String, _ object: [String: Any], besides other: [String: Any]) -> Any {
            let value = object[key] ?? NSNull()
            switch key {
            case "probe":
                // Null on both sides is no change; against a probe, a null one stands for a
                // verdict equal to the status's connectivity.
                if value is NSNull && (other[key] ?? NSNull()) is NSNull { return NSNull() }
                guard let probe = value as? [String: Any] else { return [object["connectivity"] ?? NSNull(), NSNull()] }
                return [probe["result"] ?? NSNull(), probe["portalUrl"] ?? NSNull()]
            case "linkQuality":
                return shownClass(value)
            case "primary", "vpn":
                guard var interface = value as? [String: Any] else { return NSNull() }
                interface["linkQuality"] = nil
                interface["wifi"] = shownWiFi(interface["wifi"])
                return interface
            case "interfaces":
                let list = value as? [[String: Any]] ?? []
                return list.map { interface -> [String: Any] in
                    var shown = interface
                    let index = interface["index"] as? Int ?? -1
                    shown["linkQuality"] = pathIndexes.contains(index) ? NSNull() : shownClass(interface["linkQuality"])
                    shown["wifi"] = shownWiFi(interface["wifi"])
                    return shown
                }
            default:
                return value
            }
        }
        return try Set(old.keys).union(new.keys).subtracting(["since"]).filter { key in
            try canonical(shown(key, old, besides: new)) != canonical(shown(key, new, besides: old))
        }
    }

    /// True when the two differ only in measured qualities (the path's or a standby's).
    static func onlyQualityMoved(_ previous: Status, _ current: Status) throws -> Bool {
        var old = try json(previous), new = try json(current)
        for key in ["since", "linkQuality"] { old[key] = nil; new[key] = nil }
        func strip(_ object: inout [String: Any]) {
            for key in ["primary", "vpn"] {
                if var interface = object[key] as? [String: Any] { interface["linkQuality"] = nil; object[key] = interface }
            }
            object["interfaces"] = (object["interfaces"] as? [[String: Any]] ?? []).map { interface -> [String: Any] in
                var stripped = interface
                stripped["linkQuality"] = nil
                return stripped
            }
            if var probe = object["probe"] as? [String: Any] {
                for key in ["rttMs", "checkedAt", "error", "httpStatus"] { probe[key] = nil }
                object["probe"] = probe
            }
        }
        strip(&old); strip(&new)
        return try canonical(old) == canonical(new)
    }
}
