import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
private let url = "http://192.0.2.80/check"
private let pathA = ProbePath(interface: "eth0", index: 2, addresses: ["10.0.0.2/24"], gateways: ["10.0.0.1"])
private let pathB = ProbePath(interface: "eth1", index: 3, addresses: ["10.1.0.2/24"], gateways: ["10.1.0.1"])
private let full = Probe(url: url, result: .full, httpStatus: 204, rttMs: 2, checkedAt: t0)
private let portal = Probe(url: url, result: .portal, httpStatus: 302, portalUrl: "http://login/", error: "redirected", checkedAt: t0)
private let limited = Probe(url: url, result: .limited, error: "timed out", checkedAt: t0)
private let checkerNone = ProbeVerdict.notReachable(url: url, at: t0.addingTimeInterval(-5))

private func status(_ path: ProbePath?, _ connectivity: Connectivity, _ probe: Probe?) -> Status {
    var s = Status.initial(since: t0)
    s.connectivity = connectivity
    s.probe = probe
    if let path {
        s.status = .ethernet; s.reachable = true
        s.primary = Interface(name: path.interface, index: path.index, kind: .ethernet, up: true, carrier: true,
                              operstate: "up", addresses: path.addresses, metered: false)
        s.gateways = path.gateways
    }
    return s
}

struct RuleCase: CustomTestStringConvertible, Sendable {
    let name: String
    let path: ProbePath?
    let previous: Status?
    let verdict: ConnectivityRule.Verdict?
    let connectivity: Connectivity
    let probe: Probe?
    var testDescription: String { name }
}

@Suite struct ConnectivityRuleTests {
    static let cases: [RuleCase] = [
        // Not reachable: none, with a probe saying so as soon as a check URL is known.
        RuleCase(name: "start, not reachable, checker silent", path: nil, previous: nil, verdict: nil,
                 connectivity: .none, probe: nil),
        RuleCase(name: "start, not reachable, checker said not reachable", path: nil, previous: nil,
                 verdict: .init(probe: checkerNone, path: nil), connectivity: .none, probe: checkerNone),
        RuleCase(name: "carrier lost after full: none at once, not the old verdict", path: nil,
                 previous: status(pathA, .full, full), verdict: .init(probe: full, path: pathA),
                 connectivity: .none, probe: ProbeVerdict.notReachable(url: url, at: t0)),
        RuleCase(name: "carrier lost behind a portal: none, no portal URL left over", path: nil,
                 previous: status(pathA, .portal, portal), verdict: .init(probe: portal, path: pathA),
                 connectivity: .none, probe: ProbeVerdict.notReachable(url: url, at: t0)),
        RuleCase(name: "still not reachable: the probe stays", path: nil,
                 previous: status(nil, .none, checkerNone), verdict: .init(probe: full, path: pathA),
                 connectivity: .none, probe: checkerNone),
        RuleCase(name: "not reachable, checks disabled", path: nil, previous: status(pathA, .unknown, nil),
                 verdict: .init(probe: nil, path: pathA), connectivity: .none, probe: nil),
        // Reachable again after not reachable: unknown until the check of this path answers.
        RuleCase(name: "reachable again, check not answered", path: pathA, previous: status(nil, .none, checkerNone),
                 verdict: .init(probe: checkerNone, path: nil), connectivity: .unknown, probe: nil),
        RuleCase(name: "reachable again, an old verdict of this very path is stale", path: pathA,
                 previous: status(nil, .none, checkerNone), verdict: .init(probe: limited, path: nil),
                 connectivity: .unknown, probe: nil),
        RuleCase(name: "reachable again, the checker published not-checked", path: pathA,
                 previous: status(nil, .none, checkerNone), verdict: .init(probe: nil, path: pathA),
                 connectivity: .unknown, probe: nil),
        RuleCase(name: "reachable again, check answered full", path: pathA, previous: status(pathA, .unknown, nil),
                 verdict: .init(probe: full, path: pathA), connectivity: .full, probe: full),
        RuleCase(name: "start, reachable, no verdict", path: pathA, previous: nil, verdict: nil,
                 connectivity: .unknown, probe: nil),
        // Between two reachable paths: the old verdict until the new check answers.
        RuleCase(name: "switch A→B: old verdict stays", path: pathB, previous: status(pathA, .full, full),
                 verdict: .init(probe: full, path: pathA), connectivity: .full, probe: full),
        RuleCase(name: "switch A→B: portal verdict stays", path: pathB, previous: status(pathA, .portal, portal),
                 verdict: .init(probe: portal, path: pathA), connectivity: .portal, probe: portal),
        RuleCase(name: "switch A→B: B's check answered", path: pathB, previous: status(pathA, .full, full),
                 verdict: .init(probe: limited, path: pathB), connectivity: .limited, probe: limited),
        RuleCase(name: "verdict of a path left behind is not applied", path: pathB, previous: status(pathB, .limited, limited),
                 verdict: .init(probe: full, path: pathA), connectivity: .limited, probe: limited),
        // Verdicts of the current path.
        RuleCase(name: "login at the portal", path: pathA, previous: status(pathA, .portal, portal),
                 verdict: .init(probe: full, path: pathA), connectivity: .full, probe: full),
        RuleCase(name: "checks disabled while reachable", path: pathA, previous: status(pathA, .full, full),
                 verdict: .init(probe: nil, path: pathA), connectivity: .unknown, probe: nil),
        RuleCase(name: "a none verdict for a reachable path is no verdict", path: pathA, previous: status(pathA, .full, full),
                 verdict: .init(probe: checkerNone, path: pathA), connectivity: .unknown, probe: nil),
    ]

    @Test(arguments: cases)
    func decides(_ c: RuleCase) {
        let decided = ConnectivityRule.decide(path: c.path, previous: c.previous, verdict: c.verdict, now: t0)
        #expect(decided.connectivity == c.connectivity)
        #expect(decided.probe == c.probe)
        // Whatever came in, what goes out holds the invariant.
        #expect(status(c.path, decided.connectivity, decided.probe).isConsistent)
    }

    /// Every combination of path, previous status and verdict gives a consistent status.
    @Test func invariantHoldsForEveryCombination() {
        let paths: [ProbePath?] = [nil, pathA, pathB]
        let probes: [Probe?] = [nil, full, portal, limited, checkerNone,
                                Probe(url: url, result: .unknown, error: "https", checkedAt: t0)]
        var previouses: [Status?] = [nil]
        for path in paths { for probe in probes { previouses.append(status(path, probe?.result ?? (path == nil ? .none : .unknown), probe)) } }
        var verdicts: [ConnectivityRule.Verdict?] = [nil]
        for path in paths { for probe in probes { verdicts.append(.init(probe: probe, path: path)) } }
        for path in paths {
            for previous in previouses {
                for verdict in verdicts {
                    let decided = ConnectivityRule.decide(path: path, previous: previous, verdict: verdict, now: t0)
                    let result = status(path, decided.connectivity, decided.probe)
                    #expect(result.isConsistent, "path \(String(describing: path?.interface)) verdict \(String(describing: verdict))")
                }
            }
        }
    }

    @Test func consistency() {
        #expect(status(pathA, .full, full).isConsistent)
        #expect(status(pathA, .unknown, nil).isConsistent)
        #expect(!status(pathA, .none, nil).isConsistent)
        #expect(!status(pathA, .none, checkerNone).isConsistent)
        #expect(!status(nil, .unknown, nil).isConsistent)
        #expect(!status(nil, .none, limited).isConsistent)
        #expect(!status(pathA, .portal, full).isConsistent)
    }
}

struct FamilyRuleCase: CustomTestStringConvertible, Sendable {
    let name: String
    let ipv4: Bool
    let ipv6: Bool
    /// The verdict the status carries, and what it says of each family (nil: nothing).
    let verdict: Connectivity
    let ipv4Result: Connectivity?
    let ipv6Result: Connectivity?
    let expected: (ipv4: Connectivity, ipv6: Connectivity)
    var testDescription: String { name }
}

/// `connectivity` is the better of the two families' verdicts in every status the rule makes,
/// whatever verdict it is given: a family is shown as its own check said when that backs the
/// verdict, and a verdict that does not tell the families apart speaks for those with a path
/// and no verdict of their own.
@Suite struct FamilyRuleTests {
    static let cases: [FamilyRuleCase] = [
        FamilyRuleCase(name: "each family its own check", ipv4: true, ipv6: true, verdict: .full,
                       ipv4Result: .full, ipv6Result: .limited, expected: (.full, .limited)),
        FamilyRuleCase(name: "address-literal URL: the other family stays unknown", ipv4: true, ipv6: true, verdict: .full,
                       ipv4Result: .full, ipv6Result: nil, expected: (.full, .unknown)),
        FamilyRuleCase(name: "failover: a standby's undivided full on an IPv4-only uplink", ipv4: true, ipv6: false,
                       verdict: .full, ipv4Result: nil, ipv6Result: nil, expected: (.full, .none)),
        FamilyRuleCase(name: "failover: a standby's undivided portal on a dual-stack uplink", ipv4: true, ipv6: true,
                       verdict: .portal, ipv4Result: nil, ipv6Result: nil, expected: (.portal, .portal)),
        FamilyRuleCase(name: "failover: a standby's full that answered over IPv6", ipv4: true, ipv6: true,
                       verdict: .full, ipv4Result: nil, ipv6Result: .full, expected: (.unknown, .full)),
        FamilyRuleCase(name: "kept verdict of a dual-stack path on an IPv4-only one", ipv4: true, ipv6: false,
                       verdict: .full, ipv4Result: .limited, ipv6Result: .full, expected: (.full, .none)),
        FamilyRuleCase(name: "kept verdict of a dual-stack path on an IPv6-only one", ipv4: false, ipv6: true,
                       verdict: .full, ipv4Result: .full, ipv6Result: .portal, expected: (.none, .full)),
        FamilyRuleCase(name: "not checked yet", ipv4: true, ipv6: true, verdict: .unknown,
                       ipv4Result: nil, ipv6Result: nil, expected: (.unknown, .unknown)),
        FamilyRuleCase(name: "a family's verdict above the status's is capped", ipv4: true, ipv6: true, verdict: .limited,
                       ipv4Result: .full, ipv6Result: .limited, expected: (.limited, .limited)),
    ]

    @Test(arguments: cases)
    func familiesAgreeWithConnectivity(_ c: FamilyRuleCase) throws {
        var status = Status.initial(since: t0)
        status.status = .ethernet; status.reachable = true; status.ipv4 = c.ipv4; status.ipv6 = c.ipv6
        status.primary = Interface(name: "eth1", index: 3, kind: .ethernet, up: true, carrier: true, operstate: "up",
                                   addresses: ["10.1.0.2/24", "2001:db8:1::2/64"], metered: false)
        status.gateways = ["10.1.0.1"]
        let path = try #require(ProbePath(status))
        let probe = c.verdict == .unknown ? nil
            : Probe(url: url, result: c.verdict, checkedAt: t0, ipv4Result: c.ipv4Result, ipv6Result: c.ipv6Result)
        let decided = ConnectivityRule.apply(to: status, previous: nil, verdict: .init(probe: probe, path: path), now: t0)
        #expect(decided.connectivity == c.verdict)
        #expect(decided.ipv4Connectivity == c.expected.ipv4)
        #expect(decided.ipv6Connectivity == c.expected.ipv6)
        #expect(decided.isConsistent)
        #expect(Connectivity.best(decided.ipv4Connectivity, decided.ipv6Connectivity) == decided.connectivity)
    }

    /// The failover of the standby integration test, as the classifier sees it: the primary
    /// (dual-stack, its own checks) loses carrier, the IPv4-only standby with its undivided
    /// verdict takes over; the very event of the move keeps the rule.
    @Test func failoverEventKeepsTheFamilyRule() throws {
        var before = Status.initial(since: t0)
        before.status = .ethernet; before.reachable = true; before.ipv4 = true; before.ipv6 = true
        before.primary = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                                   addresses: ["10.0.0.2/24", "2001:db8::2/64"], metered: false)
        before.gateways = ["10.0.0.1"]
        let primaryPath = try #require(ProbePath(before))
        let own = try #require(ProbeVerdict.combined(ipv4: limited, ipv6: full))
        before = ConnectivityRule.apply(to: before, previous: nil, verdict: .init(probe: own, path: primaryPath), now: t0)
        #expect(before.connectivity == .full && before.ipv4Connectivity == .limited && before.ipv6Connectivity == .full)

        var after = before
        after.ipv6 = false
        after.primary = Interface(name: "eth1", index: 3, kind: .ethernet, up: true, carrier: true, operstate: "up",
                                  addresses: ["10.1.0.2/24"], metered: false)
        after.gateways = ["10.1.0.1"]
        let standbyPath = try #require(ProbePath(after))
        // The standby's last verdict, shown in the event of the move.
        let shown = ConnectivityRule.apply(to: after, previous: before, verdict: .init(probe: portal, path: standbyPath), now: t0)
        #expect(shown.connectivity == .portal && shown.ipv4Connectivity == .portal && shown.ipv6Connectivity == .none)
        #expect(shown.isConsistent && Connectivity.best(shown.ipv4Connectivity, shown.ipv6Connectivity) == shown.connectivity)
        // No verdict for the new path yet: the old one is kept, and still agrees with the families.
        let kept = ConnectivityRule.apply(to: after, previous: before, verdict: .init(probe: own, path: primaryPath), now: t0)
        #expect(kept.connectivity == .full && kept.ipv4Connectivity == .full && kept.ipv6Connectivity == .none)
        #expect(kept.isConsistent && Connectivity.best(kept.ipv4Connectivity, kept.ipv6Connectivity) == kept.connectivity)
    }
}

struct ChangesCase: CustomTestStringConvertible, Sendable {
    let name: String
    let previous: Status
    let current: Status
    let changes: [Status.Field]
    var testDescription: String { name }
}

@Suite struct StatusChangesTests {
    static let cases: [ChangesCase] = {
        let a = status(pathA, .full, full)
        var laterCheck = a
        laterCheck.probe = Probe(url: url, result: .full, httpStatus: 204, rttMs: 40, checkedAt: t0.addingTimeInterval(300))
        var otherError = status(pathA, .limited, limited)
        otherError.probe?.error = "connection refused"
        var newPortal = status(pathA, .portal, portal)
        newPortal.probe?.portalUrl = "http://other-login/"
        var later = a
        later.since = t0.addingTimeInterval(60)
        var moreAddresses = a
        moreAddresses.primary?.addresses.append("fe80::1/64")
        moreAddresses.interfaces = [moreAddresses.primary!]
        return [
            ChangesCase(name: "nothing", previous: a, current: a, changes: []),
            ChangesCase(name: "since alone", previous: a, current: later, changes: []),
            ChangesCase(name: "probe time and RTT", previous: a, current: laterCheck, changes: []),
            ChangesCase(name: "probe error text", previous: status(pathA, .limited, limited), current: otherError, changes: []),
            ChangesCase(name: "a null probe confirmed", previous: status(pathA, .unknown, nil),
                        current: status(pathA, .unknown, Probe(url: url, result: .unknown, error: "https", checkedAt: t0)), changes: []),
            ChangesCase(name: "not reachable, probe made", previous: status(nil, .none, nil), current: status(nil, .none, checkerNone), changes: []),
            ChangesCase(name: "check answers after reconnect", previous: status(pathA, .unknown, nil), current: a,
                        changes: [.connectivity, .probe]),
            ChangesCase(name: "portal URL", previous: status(pathA, .portal, portal), current: newPortal, changes: [.probe]),
            ChangesCase(name: "login", previous: status(pathA, .portal, portal), current: a, changes: [.connectivity, .probe]),
            ChangesCase(name: "carrier lost", previous: a, current: status(nil, .none, checkerNone),
                        changes: [.connectivity, .gateways, .primary, .probe, .reachable, .status]),
            ChangesCase(name: "addresses of the primary", previous: a, current: moreAddresses, changes: [.interfaces, .primary]),
            ChangesCase(name: "disabled checks: two null probes", previous: status(pathA, .unknown, nil), current: status(nil, .none, nil),
                        changes: [.connectivity, .gateways, .primary, .reachable, .status]),
        ]
    }()

    @Test(arguments: cases)
    func changes(_ c: ChangesCase) {
        #expect(c.current.changes(from: c.previous) == c.changes)
        #expect(c.current.differs(from: c.previous) == !c.changes.isEmpty)
        let event = ReachabilityEvent(sequence: 2, timestamp: t0, event: .reachabilityChanged, reason: Reason(code: .resync),
                                      previous: c.previous, current: c.current)
        #expect(event.changes == c.changes.map(\.rawValue))
    }

    @Test func initialHasNoChanges() throws {
        let event = ReachabilityEvent(sequence: 1, timestamp: t0, event: .initial, reason: Reason(code: .initial),
                                      previous: nil, current: status(pathA, .full, full))
        #expect(event.changes == [])
        #expect(String(decoding: WireJSONWriter.json(event), as: UTF8.self).hasPrefix(#"{"changes":[],"current":"#))
    }

    /// An event from a daemon without `changes` gets them derived; one with them keeps them as sent.
    @Test func decodingWithAndWithoutChanges() throws {
        let event = ReachabilityEvent(sequence: 2, timestamp: t0, event: .reachabilityChanged, reason: Reason(code: .probeResult),
                                      previous: status(pathA, .unknown, nil), current: status(pathA, .full, full))
        var object = try JSONValue.encoding(event).objectValue ?? [:]
        object["changes"] = nil
        #expect(try JSONValue.object(object).decode(ReachabilityEvent.self).changes == ["connectivity", "probe"])
        object["changes"] = .array([.string("connectivity"), .string("simulated")])
        #expect(try JSONValue.object(object).decode(ReachabilityEvent.self).changes == ["connectivity", "simulated"])
    }

    @Test func fieldNames() {
        #expect(SubscriptionFilter.fields(named: ["status", "connectivity"]) == [.status, .connectivity])
        #expect(SubscriptionFilter.fields(named: ["since"]) == nil)
        #expect(SubscriptionFilter.fields(named: ["Status"]) == nil)
        #expect(SubscriptionFilter.fields(named: []) == nil)
        // Every field but `since` can be named, and `changes` lists them sorted by name.
        let names = Status.Field.allCases.map(\.rawValue)
        #expect(Set(names) == Set(Status.CodingKeys.allCases.map(\.stringValue)).subtracting(["since"]))
    }
}
