import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

/// eth0 (metric 100) and wlan0 (metric 600) each with a default route; wwan0, metered by kind,
/// too; eth1 up without a route.
private func twoUplinks(ethUp: Bool = true) -> NetworkSnapshot {
    NetworkSnapshot(
        links: [2: LinkState(index: 2, name: "eth0", kind: .ethernet, up: ethUp, carrier: ethUp, operstate: ethUp ? "up" : "down"),
                3: LinkState(index: 3, name: "wlan0", kind: .wifi, up: true, carrier: true, operstate: "up"),
                4: LinkState(index: 4, name: "wwan0", kind: .wwan, up: true, carrier: true, operstate: "up"),
                5: LinkState(index: 5, name: "eth1", kind: .ethernet, up: true, carrier: true, operstate: "up")],
        addresses: [AddressState(ifindex: 2, family: .ipv4, address: "10.77.0.2", prefixLength: 24),
                    AddressState(ifindex: 3, family: .ipv4, address: "192.168.1.20", prefixLength: 24),
                    AddressState(ifindex: 4, family: .ipv4, address: "100.64.0.2", prefixLength: 30),
                    AddressState(ifindex: 5, family: .ipv4, address: "10.9.0.2", prefixLength: 24)],
        routes: [RouteState(family: .ipv4, gateway: "10.77.0.1", oif: 2, metric: 100),
                 RouteState(family: .ipv4, gateway: "192.168.1.1", oif: 3, metric: 600),
                 RouteState(family: .ipv4, gateway: "100.64.0.1", oif: 4, metric: 700)])
}

@Suite struct StandbyUplinkTests {
    @Test func everyOtherUplinkWithADefaultRoute() {
        let indexed = IndexedSnapshot(twoUplinks())
        let status = Classifier.classify(indexed, since: t0)
        #expect(status.primary?.name == "eth0")
        let uplinks = StandbyUplink.all(in: indexed, status: status)
        #expect(uplinks == [
            StandbyUplink(path: ProbePath(interface: "wlan0", index: 3, addresses: ["192.168.1.20/24"], gateways: ["192.168.1.1"]),
                          expensive: false),
            StandbyUplink(path: ProbePath(interface: "wwan0", index: 4, addresses: ["100.64.0.2/30"], gateways: ["100.64.0.1"]),
                          expensive: true),
        ])
        // After a failover the old primary is gone from the list (no carrier) and wlan0 is the path.
        let failed = IndexedSnapshot(twoUplinks(ethUp: false))
        let after = Classifier.classify(failed, since: t0)
        #expect(after.primary?.name == "wlan0")
        #expect(StandbyUplink.all(in: failed, status: after).map(\.path.interface) == ["wwan0"])
    }

    /// A standby verdict is its interface's connectivity, an event of `interfaces` alone; the
    /// status's connectivity does not move, and the primary never shows one.
    @Test func aStandbyVerdictIsAnInterfaceChangeOnly() {
        var tracker = StatusTracker(snapshot: twoUplinks(), now: t0)
        var checked = twoUplinks()
        checked.standbyVerdicts = [3: Probe(url: "http://x/", result: .limited, checkedAt: t0),
                                   2: Probe(url: "http://x/", result: .full, checkedAt: t0)]
        let reason = Reason(code: .probeResult, interface: "wlan0", detail: "standby uplink")
        guard case .emit(let event) = tracker.update(checked, reason: reason, now: t0) else {
            Issue.record("no event"); return
        }
        #expect(event.changes == ["interfaces"])
        #expect(event.reason == reason)
        #expect(event.current.connectivity == event.previous?.connectivity)
        #expect(event.current.interfaces.first { $0.name == "wlan0" }?.connectivity == .limited)
        #expect(event.current.interfaces.first { $0.name == "eth0" }?.connectivity == nil)
        #expect(event.current.primary?.connectivity == nil)
        #expect(event.current.interfaces.first { $0.name == "eth1" }?.connectivity == nil)
    }

    /// The primary fails over to a standby uplink: the very event of the move shows that
    /// uplink's own last verdict (not the old path's), with its `checkedAt`.
    @Test func failoverShowsTheStandbysVerdictAtOnce() {
        // IPv4 alone has a path: the path the status's own is.
        let eth0 = ProbePath(interface: "eth0", index: 2, addresses: ["10.77.0.2/24"], gateways: ["10.77.0.1"], ipv6: false)
        let earlier = t0.addingTimeInterval(-60)
        var before = twoUplinks()
        before.probe = Probe(url: "http://x/", result: .full, httpStatus: 204, checkedAt: t0)
        before.probePath = eth0
        before.standbyVerdicts = [3: Probe(url: "http://x/", result: .portal, httpStatus: 302, portalUrl: "http://login/", checkedAt: earlier)]
        var tracker = StatusTracker(snapshot: before, now: t0)
        #expect(tracker.status.connectivity == .full && tracker.status.primary?.name == "eth0")
        var after = before
        after.links[2]?.carrier = false
        guard case .emit(let event) = tracker.update(after, now: t0) else { Issue.record("no event"); return }
        #expect(event.current.primary?.name == "wlan0")
        #expect(event.current.connectivity == .portal)
        #expect(event.current.probe?.checkedAt == earlier && event.current.probe?.portalUrl == "http://login/")
        #expect(event.current.primary?.connectivity == nil)
    }
}
