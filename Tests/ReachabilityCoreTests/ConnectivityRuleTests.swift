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
