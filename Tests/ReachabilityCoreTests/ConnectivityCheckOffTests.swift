import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

private func ethernet(check: Bool) -> NetworkSnapshot {
    var snapshot = NetworkSnapshot(
        links: [2: LinkState(index: 2, name: "eth0", kind: .ethernet, up: true, carrier: true, operstate: "up")],
        addresses: [AddressState(ifindex: 2, family: .ipv4, address: "10.0.0.2", prefixLength: 24)],
        routes: [RouteState(family: .ipv4, gateway: "10.0.0.1", oif: 2, metric: 100)])
    snapshot.connectivityCheck = check
    return snapshot
}

/// `[Connectivity] Enabled=no`: the status says the check is off (`connectivityCheck` false), so
/// that a client tells "unknown for good" from "not checked yet".
@Suite struct ConnectivityCheckOffTests {
    @Test(arguments: [true, false])
    func statusCarriesTheSwitch(_ check: Bool) {
        let status = Classifier.classify(ethernet(check: check), since: t0)
        #expect(status.reachable)
        #expect(status.connectivity == .unknown && status.probe == nil)
        #expect(status.connectivityCheck == check)
        let unreachable = Classifier.classify({ var s = ethernet(check: check); s.routes = []; return s }(), since: t0)
        #expect(!unreachable.reachable && unreachable.connectivityCheck == check)
    }

    /// A reload that turns the check off is an event that names the field, and nothing else
    /// when nothing else changed.
    @Test func reloadTurningTheCheckOffIsAnEvent() throws {
        var tracker = StatusTracker(snapshot: ethernet(check: true), now: t0)
        let action = tracker.update(ethernet(check: false), reason: Reason(code: .configReloaded), now: t0.addingTimeInterval(1))
        guard case .emit(let event) = action else { Issue.record("no event"); return }
        #expect(event.changes == ["connectivityCheck"])
        #expect(event.reason.code == .configReloaded)
        #expect(tracker.update(ethernet(check: false), now: t0.addingTimeInterval(2)) == .none)
    }

    /// On the wire it is always there; a status without it (an older daemon) or with null checks.
    @Test func wireForm() throws {
        var status = Classifier.classify(ethernet(check: false), since: t0)
        let data = try WireJSON.encoder().encode(status)
        #expect(String(decoding: data, as: UTF8.self).contains(#""connectivityCheck":false"#))
        #expect(String(decoding: WireJSONWriter.json(status), as: UTF8.self).contains(#""connectivityCheck":false"#))
        #expect(try WireJSON.decoder().decode(Status.self, from: data) == status)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        for absent: Any? in [nil, NSNull()] {
            object["connectivityCheck"] = absent
            let old = try WireJSON.decoder().decode(Status.self, from: try JSONSerialization.data(withJSONObject: object))
            #expect(old.connectivityCheck)
        }
        status.connectivityCheck = true
        #expect(String(decoding: WireJSONWriter.json(status), as: UTF8.self).contains(#""connectivityCheck":true"#))
    }

    /// A simulated verdict stands for a check's even with the real check off; without one the
    /// simulation keeps the real switch.
    @Test func simulation() throws {
        let real = Classifier.classify(ethernet(check: false), since: t0)
        let portal = try Simulation(status: .wifi, connectivity: .portal).resolve(over: real, now: t0)
        #expect(portal.connectivity == .portal && portal.connectivityCheck)
        let plain = try Simulation(status: .wifi).resolve(over: real, now: t0)
        #expect(plain.connectivity == .unknown && !plain.connectivityCheck)
        let offline = try Simulation(status: .notReachable).resolve(over: real, now: t0)
        #expect(!offline.connectivityCheck)
    }
}
