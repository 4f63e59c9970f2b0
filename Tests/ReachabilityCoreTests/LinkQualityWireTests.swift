import Foundation
import Testing
@testable import ReachabilityCore

/// `Status.linkQuality` and `Interface.linkQuality` on the wire and in events: only a change of
/// class (`level`, `effectiveType`, between two known classes) is an event; new figures are carried
/// without one; an older daemon's status has none.
@Suite struct LinkQualityWireTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let good = LinkQuality(level: .good, effectiveType: .fourG, rttMs: 48, minRttMs: 30, downlinkKbps: 8000,
                                  lossPercent: 0.5, samples: 12, source: .passive, measuredAt: t0)
    static let moderate = LinkQuality(level: .moderate, effectiveType: .threeG, rttMs: 420, samples: 9, source: .passive,
                                      measuredAt: t0)

    static func interface(_ name: String, _ index: Int, quality: LinkQuality?) -> Interface {
        Interface(name: name, index: index, kind: .ethernet, up: true, carrier: true, operstate: "up",
                  addresses: ["10.0.\(index).2/24"], metered: false, linkQuality: quality)
    }

    /// eth0 the primary, wlan0 a standby; each with a quality.
    static func status(primary: LinkQuality?, standby: LinkQuality?) -> Status {
        let eth = interface("eth0", 2, quality: primary), wlan = interface("wlan0", 3, quality: standby)
        return Status(status: .ethernet, reachable: true, connectivity: .full, primary: eth, vpn: nil, cellular: nil,
                      expensive: false, ipv4: true, ipv6: false, gateways: ["10.0.2.1"], flags: [.reachable],
                      interfaces: [eth, wlan], probe: nil, since: t0, linkQuality: primary)
    }

    /// The figures that change with every dump: none makes an event, on the path or a standby.
    @Test func newFiguresAloneAreNoChange() {
        let before = Self.status(primary: Self.good, standby: Self.moderate)
        var figures = Self.good
        figures.rttMs = 61; figures.minRttMs = 29; figures.samples = 40; figures.downlinkKbps = 120
        figures.lossPercent = 1.9; figures.measuredAt = Self.t0.addingTimeInterval(10); figures.stale = true
        figures.source = .probe
        figures.signal = RadioSignal(technology: "lte", rsrp: -90, level: 3)
        var standby = Self.moderate
        standby.rttMs = 900; standby.samples = 2; standby.measuredAt = Self.t0.addingTimeInterval(30)
        let after = Self.status(primary: figures, standby: standby)
        #expect(after != before)
        #expect(after.changes(from: before).isEmpty)
        #expect(!after.differs(from: before))
    }

    /// The path's class changing is `linkQuality` alone: not `primary` (a `statusOnly`
    /// subscriber hears nothing), not `interfaces`.
    @Test func thePathsClassIsLinkQualityAlone() {
        let before = Self.status(primary: Self.good, standby: Self.good)
        var worse = Self.good
        worse.level = .moderate
        #expect(Self.status(primary: worse, standby: Self.good).changes(from: before) == [.linkQuality])
        var slower = Self.good
        slower.effectiveType = .threeG
        #expect(Self.status(primary: slower, standby: Self.good).changes(from: before) == [.linkQuality])
        // Appearing and going count too: a subscriber to `linkQuality` hears the first class.
        #expect(Self.status(primary: nil, standby: Self.good).changes(from: before) == [.linkQuality])
        #expect(before.changes(from: Self.status(primary: nil, standby: Self.good)) == [.linkQuality])
    }

    /// A standby's class changing moves `interfaces` only.
    @Test func aStandbysClassIsInterfacesAlone() {
        let before = Self.status(primary: Self.good, standby: Self.good)
        #expect(Self.status(primary: Self.good, standby: Self.moderate).changes(from: before) == [.interfaces])
        #expect(Self.status(primary: Self.good, standby: nil).changes(from: before) == [.interfaces])
    }

    /// The VPN's interface too is the path's: its quality counts in `linkQuality` only.
    @Test func theVPNsQualityIsThePaths() {
        var before = Self.status(primary: Self.good, standby: Self.good)
        let tun = Interface(name: "tun0", index: 9, kind: .vpn, up: true, carrier: true, operstate: "up",
                            addresses: ["10.8.0.2/32"], metered: false, linkQuality: Self.good)
        before.vpn = tun
        before.interfaces.append(tun)
        var after = before
        after.vpn?.linkQuality = Self.moderate
        after.interfaces[2].linkQuality = Self.moderate
        after.linkQuality = Self.moderate
        #expect(after.changes(from: before) == [.linkQuality])
    }

    /// Any other change of an interface still counts, whatever its quality did.
    @Test func otherInterfaceChangesStillCount() {
        let before = Self.status(primary: Self.good, standby: Self.good)
        var after = Self.status(primary: Self.good, standby: Self.moderate)
        after.interfaces[1].carrier = false
        #expect(after.changes(from: before) == [.interfaces])
        var renamed = before
        renamed.primary?.addresses = ["10.0.2.3/24"]
        renamed.primary?.linkQuality?.rttMs = 80
        #expect(renamed.changes(from: before) == [.primary])
    }

    /// `Subscribe(changes: ["linkQuality"])`: the path's class changes come through, figures
    /// and standbys' classes do not.
    @Test func subscriptionToLinkQuality() throws {
        let fields = try #require(SubscriptionFilter.fields(named: ["linkQuality"]))
        #expect(fields == [.linkQuality])
        var filter = SubscriptionFilter(fields: fields)
        var sequence = 0
        var last = Self.status(primary: Self.good, standby: Self.good)
        func send(_ next: Status) -> Bool {
            sequence += 1
            defer { last = next }
            return filter.admit(ReachabilityEvent(sequence: sequence, timestamp: Self.t0, event: .reachabilityChanged,
                                                  reason: Reason(code: .qualityChanged, interface: "eth0"),
                                                  previous: last, current: next))
        }
        let initial = filter.admit(ReachabilityEvent(sequence: 0, timestamp: Self.t0, event: .initial,
                                                     reason: Reason(code: .initial), previous: nil, current: last))
        #expect(initial)
        var figures = Self.good
        figures.rttMs = 99
        #expect(!send(Self.status(primary: figures, standby: Self.good)))
        #expect(!send(Self.status(primary: figures, standby: Self.moderate)))
        #expect(send(Self.status(primary: Self.moderate, standby: Self.moderate)))
        // `statusOnly` subscribers hear none of it.
        var essential = SubscriptionFilter(statusOnly: true, lastSent: Self.status(primary: Self.good, standby: Self.good))
        let admitted = essential.admit(ReachabilityEvent(sequence: 9, timestamp: Self.t0, event: .reachabilityChanged,
                                                         reason: Reason(code: .qualityChanged, interface: "eth0"),
                                                         previous: nil, current: Self.status(primary: Self.moderate, standby: nil)))
        #expect(!admitted)
    }

    /// A status or interface from a daemon that never measured quality decodes with none.
    @Test func anOlderDaemonHasNoQuality() throws {
        let status = Self.status(primary: Self.good, standby: Self.moderate)
        let json = try JSONSerialization.jsonObject(with: Data(WireJSONWriter.json(status))) as? [String: Any]
        var object = try #require(json)
        object["linkQuality"] = nil
        for key in ["primary"] {
            var interface = try #require(object[key] as? [String: Any])
            interface["linkQuality"] = nil
            object[key] = interface
        }
        object["interfaces"] = (object["interfaces"] as? [[String: Any]])?.map { var i = $0; i["linkQuality"] = nil; return i }
        let old = try WireJSON.decoder().decode(Status.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.linkQuality == nil && old.primary?.linkQuality == nil && old.interfaces.allSatisfy { $0.linkQuality == nil })
        #expect(old.primary?.name == "eth0" && old.interfaces.count == 2)
        // And the round trip of a new one keeps every figure.
        let decoded = try WireJSON.decoder().decode(Status.self, from: Data(WireJSONWriter.json(status)))
        #expect(decoded == status)
    }

    /// The log line names the uplink and its new class.
    @Test func theLogLineNamesTheClass() {
        let before = Self.status(primary: Self.good, standby: Self.good)
        let after = Self.status(primary: Self.moderate, standby: Self.good)
        let event = ReachabilityEvent(sequence: 46, timestamp: Self.t0, event: .reachabilityChanged,
                                      reason: Reason(code: .qualityChanged, interface: "eth0"), previous: before, current: after)
        #expect(event.logLine == "#46 qualityChanged eth0: moderate (3g, 420 ms)")
        var stale = Self.good
        stale.stale = true
        let standby = ReachabilityEvent(sequence: 47, timestamp: Self.t0, event: .reachabilityChanged,
                                        reason: Reason(code: .qualityChanged, interface: "wlan0"), previous: before,
                                        current: Self.status(primary: Self.good, standby: stale))
        #expect(standby.logLine == "#47 qualityChanged wlan0: good (4g, 48 ms, stale)")
    }
}
