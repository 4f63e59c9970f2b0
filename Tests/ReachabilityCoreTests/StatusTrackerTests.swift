import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func ethernetSnapshot(carrier: Bool = true, metric: UInt32 = 100) -> NetworkSnapshot {
    NetworkSnapshot(
        links: [2: LinkState(index: 2, name: "eth0", kind: .ethernet, up: true, carrier: carrier, operstate: carrier ? "up" : "lowerlayerdown")],
        addresses: [AddressState(ifindex: 2, family: .ipv4, address: "10.0.0.2", prefixLength: 24)],
        routes: [RouteState(family: .ipv4, gateway: "10.0.0.1", oif: 2, metric: metric)])
}

@Suite struct StatusTrackerTests {
    @Test func emitsOnlyOnChangeWithIncreasingSequence() {
        var tracker = StatusTracker(firstSequence: 1000, now: t0)
        #expect(tracker.status.status == .notReachable)
        #expect(tracker.initialEvent(now: t0).sequence == 1000)
        #expect(tracker.initialEvent(now: t0).previous == nil)

        guard case let .emit(up) = tracker.update(ethernetSnapshot(), now: t0.addingTimeInterval(1)) else {
            Issue.record("no event for the uplink"); return
        }
        #expect(up.sequence == 1001)
        #expect(up.event == .reachabilityChanged)
        #expect(up.previous?.status == .notReachable)
        #expect(up.current.status == .ethernet)
        #expect(up.current.since == t0.addingTimeInterval(1))

        // The same picture again is no event.
        #expect(tracker.update(ethernetSnapshot(), now: t0.addingTimeInterval(2)) == .none)

        guard case let .emit(down) = tracker.update(ethernetSnapshot(carrier: false), now: t0.addingTimeInterval(3)) else {
            Issue.record("no event for carrier loss"); return
        }
        #expect(down.sequence == 1002)
        #expect(down.reason == Reason(code: .carrierLost, interface: "eth0"))
        #expect(down.current.status == .notReachable)
    }

    @Test func metricChangeIsAnEventOnlyWhenTheStatusObjectChanges() {
        var tracker = StatusTracker(snapshot: ethernetSnapshot(), now: t0)
        // A metric change alone changes nothing in the Status object: no event.
        #expect(tracker.update(ethernetSnapshot(metric: 50), now: t0) == .none)
    }

    @Test func probeTimestampIsNoEventButVerdictIs() {
        var snapshot = ethernetSnapshot()
        snapshot.probePath = ProbePath(Classifier.classify(snapshot, since: t0))
        snapshot.probe = Probe(url: "http://127.0.0.1/", result: .full, httpStatus: 204, rttMs: 3, checkedAt: t0)
        var tracker = StatusTracker(snapshot: snapshot, now: t0)
        snapshot.probe = Probe(url: "http://127.0.0.1/", result: .full, httpStatus: 204, rttMs: 9, checkedAt: t0.addingTimeInterval(300))
        #expect(tracker.update(snapshot, now: t0) == .none)
        #expect(tracker.status.probe?.checkedAt == t0.addingTimeInterval(300))

        snapshot.probe = Probe(url: "http://127.0.0.1/", result: .portal, httpStatus: 302, portalUrl: "http://login/", checkedAt: t0.addingTimeInterval(301))
        guard case let .emit(event) = tracker.update(snapshot, now: t0) else { Issue.record("no event"); return }
        #expect(event.reason.code == .probeResult)
        #expect(event.current.connectivity == .portal)
    }

    @Test func forcedReasonWins() {
        var tracker = StatusTracker(now: t0)
        guard case let .emit(event) = tracker.update(ethernetSnapshot(), reason: Reason(code: .resync), now: t0) else {
            Issue.record("no event"); return
        }
        #expect(event.reason.code == .resync)
    }
}

struct ReasonCase: CustomTestStringConvertible, Sendable {
    let name: String
    let old: NetworkSnapshot
    let new: NetworkSnapshot
    let code: Reason.Code
    let interface: String?
    var testDescription: String { name }
}

private let base = ethernetSnapshot()
/// `base` with eth0's IPv6 link-local address, still in duplicate address detection or through it.
private func withLinkLocal(tentative: Bool) -> NetworkSnapshot {
    var s = base
    s.addresses.insert(AddressState(ifindex: 2, family: .ipv6, address: "fe80::1", prefixLength: 64, scope: .link,
                                    tentative: tentative))
    return s
}
private let withWifi: NetworkSnapshot = {
    var s = base
    s.links[3] = LinkState(index: 3, name: "wlan0", kind: .wifi, up: true, carrier: true, operstate: "up")
    return s
}()

let reasonCases: [ReasonCase] = [
    ReasonCase(name: "carrier lost", old: base, new: ethernetSnapshot(carrier: false), code: .carrierLost, interface: "eth0"),
    ReasonCase(name: "carrier gained", old: ethernetSnapshot(carrier: false), new: base, code: .carrierGained, interface: "eth0"),
    ReasonCase(name: "link added", old: base, new: withWifi, code: .linkAdded, interface: "wlan0"),
    ReasonCase(name: "link removed", old: withWifi, new: base, code: .linkRemoved, interface: "wlan0"),
    ReasonCase(name: "link down beats its route removal", old: base, new: {
        var s = base; s.links[2]?.up = false; s.links[2]?.carrier = false; s.routes = []; return s }(), code: .linkDown, interface: "eth0"),
    ReasonCase(name: "route removed", old: base, new: { var s = base; s.routes = []; return s }(), code: .routeRemoved, interface: "eth0"),
    ReasonCase(name: "address added", old: { var s = base; s.addresses = []; return s }(), new: base, code: .addressAdded, interface: "eth0"),
    ReasonCase(name: "an address passing duplicate address detection is added", old: withLinkLocal(tentative: true),
               new: withLinkLocal(tentative: false), code: .addressAdded, interface: "eth0"),
    ReasonCase(name: "an address falling back to tentative is removed", old: withLinkLocal(tentative: false),
               new: withLinkLocal(tentative: true), code: .addressRemoved, interface: "eth0"),
    ReasonCase(name: "operstate settles to up", old: { var s = base; s.links[2]?.operstate = "down"; return s }(), new: base, code: .linkUp, interface: "eth0"),
    ReasonCase(name: "operstate leaves up", old: base, new: { var s = base; s.links[2]?.operstate = "dormant"; return s }(), code: .linkDown, interface: "eth0"),
    ReasonCase(name: "a route explains more than operstate settling", old: { var s = base; s.links[2]?.operstate = "down"; s.routes = []; return s }(), new: base, code: .routeAdded, interface: "eth0"),
    ReasonCase(name: "link renamed", old: base, new: { var s = base; s.links[2]?.name = "wan0"; return s }(), code: .linkAdded, interface: "wan0"),
    ReasonCase(name: "modem changed", old: base, new: { var s = base; s.modems = [ModemState(path: "/m/0", interfaces: [], accessTechnologies: 0)]; return s }(), code: .modemChanged, interface: nil),
]

@Suite struct ReasonDeriverTests {
    @Test(arguments: reasonCases)
    func derives(_ c: ReasonCase) {
        let reason = ReasonDeriver.reason(from: c.old, to: c.new, focus: ["eth0"])
        #expect(reason?.code == c.code)
        #expect(reason?.interface == c.interface)
    }

    @Test func focusWinsOverAnUnrelatedInterface() {
        var old = withWifi
        old.links[3]?.carrier = true
        var new = old
        new.links[2]?.carrier = false      // the primary
        new.links[3]?.up = false           // unrelated, more significant code
        let reason = ReasonDeriver.reason(from: old, to: new, focus: ["eth0"])
        #expect(reason == Reason(code: .carrierLost, interface: "eth0"))
    }

    /// A status lists no tentative address, so the address is news when it passes detection.
    @Test func theAddressThatPassedDetectionIsTheDetail() {
        let reason = ReasonDeriver.reason(from: withLinkLocal(tentative: true), to: withLinkLocal(tentative: false), focus: ["eth0"])
        #expect(reason == Reason(code: .addressAdded, interface: "eth0", detail: "fe80::1/64"))
        // A tentative address coming or going is nothing a status shows.
        #expect(ReasonDeriver.reason(from: base, to: withLinkLocal(tentative: true)) == nil)
    }

    @Test func nothingChangedIsNil() {
        #expect(ReasonDeriver.reason(from: base, to: base) == nil)
    }
}

@Suite struct WireFormatTests {
    @Test func statusEncodesEveryFieldWithNulls() throws {
        let status = Classifier.classify(base, since: t0)
        let json = try WireJSON.string(status)
        for key in ["\"vpn\":null", "\"cellular\":null", "\"probe\":null", "\"since\":\"2027-01-15T08:00:00.000Z\"",
                    "\"status\":\"ethernet\"", "\"flags\":[\"reachable\"]", "\"metered\":false"] {
            #expect(json.contains(key), "missing \(key) in \(json)")
        }
        let decoded = try WireJSON.decoder().decode(Status.self, from: Data(json.utf8))
        #expect(decoded == status)
    }

    @Test func eventRoundTrips() throws {
        let event = ReachabilityEvent(sequence: 42, timestamp: t0, event: .initial, reason: Reason(code: .initial),
                                      previous: nil, current: Classifier.classify(base, since: t0))
        let json = try WireJSON.string(event)
        #expect(json.contains("\"previous\":null"))
        #expect(json.contains("\"interface\":null"))
        #expect(try WireJSON.decoder().decode(ReachabilityEvent.self, from: Data(json.utf8)) == event)
    }

    @Test func generationMapCoversEveryBit() {
        for entry in ModemAccessTechnology.table {
            #expect(entry.bit.newest?.name == entry.name)
        }
        #expect(ModemAccessTechnology(rawValue: 0).newest == nil)
    }
}

/// Carrier loss and uplink switches with a connectivity verdict, through the tracker alone: one
/// event per change, each consistent, none that changes only probe details.
@Suite struct StatusTrackerConnectivityTests {
    static let url = "http://192.0.2.80/"

    func full(_ at: Double) -> Probe { Probe(url: Self.url, result: .full, httpStatus: 204, rttMs: at, checkedAt: t0.addingTimeInterval(at)) }

    /// Feeds `snapshot` with the checker's verdict for `path` (by default the snapshot's own path).
    func verdict(_ snapshot: NetworkSnapshot, _ probe: Probe?, path: ProbePath?? = .none) -> NetworkSnapshot {
        var s = snapshot
        s.setVerdict(probe, path: path ?? ProbePath(Classifier.classify(snapshot, since: t0)))
        return s
    }

    func emit(_ tracker: inout StatusTracker, _ snapshot: NetworkSnapshot, at: Double) -> ReachabilityEvent? {
        guard case .emit(let event) = tracker.update(snapshot, now: t0.addingTimeInterval(at)) else { return nil }
        #expect(event.current.isConsistent, "event \(event.sequence)")
        #expect(event.changes != ["probe"] || event.previous?.probe?.result != event.current.probe?.result
                || event.previous?.probe?.portalUrl != event.current.probe?.portalUrl)
        return event
    }

    @Test func carrierLossAndBack() throws {
        let up = verdict(ethernetSnapshot(), full(1))
        var tracker = StatusTracker(snapshot: up, now: t0)
        #expect(tracker.status.connectivity == .full)

        // Carrier lost: one event, none with a none probe at once; the checker's stale full
        // verdict (still for the old path) does not leak into it.
        let lost = try #require(emit(&tracker, { var s = ethernetSnapshot(carrier: false); s.setVerdict(full(1), path: up.probePath); return s }(), at: 2))
        #expect(lost.reason.code == .carrierLost)
        #expect(lost.current.connectivity == .none && lost.current.probe?.result == Connectivity.none)
        #expect(lost.current.probe?.error?.hasPrefix("not reachable: ") == true)
        #expect(lost.changes == ["connectivity", "flags", "gateways", "interfaces", "ipv4", "ipv4Connectivity", "primary", "probe",
                                 "reachable", "routing", "status"])
        // The checker then says "not reachable" itself: no event.
        var down = ethernetSnapshot(carrier: false)
        down.setVerdict(ProbeVerdict.notReachable(url: Self.url, at: t0.addingTimeInterval(3)), path: nil)
        #expect(emit(&tracker, down, at: 3) == nil)

        // Carrier back: reachable with connectivity unknown and no probe, never none.
        var back = ethernetSnapshot()
        back.setVerdict(down.probe, path: nil)
        let gained = try #require(emit(&tracker, back, at: 4))
        #expect(gained.reason.code == .carrierGained)
        #expect(gained.current.connectivity == .unknown && gained.current.probe == nil)
        #expect(gained.changes.contains("connectivity") && gained.changes.contains("probe"))
        // The checker publishes "not checked" for the new path: nothing to tell.
        #expect(emit(&tracker, verdict(back, nil), at: 4.5) == nil)
        // Its answer: the second event, the verdict alone (a check that tells no family apart
        // speaks for IPv4, the one family with a path: the family rule holds in every event).
        let answered = try #require(emit(&tracker, verdict(back, full(5)), at: 5))
        #expect(answered.reason.code == .probeResult)
        #expect(answered.changes == ["connectivity", "ipv4Connectivity", "probe"])
        #expect(answered.current.ipv4Connectivity == .full)
        // A re-check with the same verdict: no event.
        #expect(emit(&tracker, verdict(back, full(300)), at: 300) == nil)
    }

    @Test func switchBetweenUplinksKeepsTheVerdict() throws {
        var both = ethernetSnapshot()
        both.links[3] = LinkState(index: 3, name: "eth1", kind: .ethernet, up: true, carrier: true, operstate: "up")
        both.addresses.insert(AddressState(ifindex: 3, family: .ipv4, address: "10.1.0.2", prefixLength: 24))
        both.routes.insert(RouteState(family: .ipv4, gateway: "10.1.0.1", oif: 3, metric: 200))
        let onA = verdict(both, full(1))
        var tracker = StatusTracker(snapshot: onA, now: t0)
        #expect(tracker.status.primary?.name == "eth0" && tracker.status.connectivity == .full)

        var onB = onA
        onB.links[2]?.carrier = false
        let moved = try #require(emit(&tracker, onB, at: 2))
        #expect(moved.current.primary?.name == "eth1")
        #expect(moved.current.connectivity == .full && moved.current.probe == full(1))
        #expect(!moved.changes.contains("connectivity") && !moved.changes.contains("probe"))
        // B's check answers the same: no event.
        #expect(emit(&tracker, verdict(onB, full(3)), at: 3) == nil)
        #expect(tracker.status.probe == full(3))
    }
}
