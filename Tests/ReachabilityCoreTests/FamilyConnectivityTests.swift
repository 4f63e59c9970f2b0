import Foundation
import Testing
@testable import ReachabilityCore

private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
private let url = "http://check.example/generate_204"

private func probe(_ result: Connectivity, stage: ProbeStage? = nil, error: String? = nil) -> Probe {
    Probe(url: url, result: result, httpStatus: result == .full ? 204 : nil, error: error, checkedAt: t0, failedStage: stage)
}

/// A reachable status over eth0 with the given families routed.
private func reachable(ipv4: Bool, ipv6: Bool) -> Status {
    var s = Status.initial(since: t0)
    s.status = .ethernet; s.reachable = true; s.ipv4 = ipv4; s.ipv6 = ipv6
    s.primary = Interface(name: "eth0", index: 2, kind: .ethernet, up: true, carrier: true, operstate: "up",
                          addresses: ["192.0.2.2/24", "2001:db8::2/64"], metered: false)
    s.gateways = ["192.0.2.1"]
    return s
}

struct CombineCase: CustomTestStringConvertible, Sendable {
    let name: String
    let ipv4: Probe?
    let ipv6: Probe?
    let result: Connectivity?
    let failedStage: ProbeStage?
    var testDescription: String { name }
}

/// Two internets judged apart: the order of verdicts, one verdict from two checks, the stage a
/// check failed at, and each family's field on the status.
@Suite struct FamilyConnectivityTests {
    @Test func orderIsFullPortalLimitedUnknownNone() {
        let ordered: [Connectivity] = [.none, .unknown, .limited, .portal, .full]
        #expect(ordered.map(\.rank) == [0, 1, 2, 3, 4])
        #expect(Set(Connectivity.allCases.map(\.rank)).count == Connectivity.allCases.count)
        for a in Connectivity.allCases {
            for b in Connectivity.allCases {
                let best = Connectivity.best(a, b)
                #expect(best == Connectivity.best(b, a))
                #expect(best.rank == max(a.rank, b.rank))
            }
        }
    }

    static let combineCases: [CombineCase] = [
        CombineCase(name: "both full", ipv4: probe(.full), ipv6: probe(.full), result: .full, failedStage: nil),
        CombineCase(name: "IPv6 broken: IPv4 full wins", ipv4: probe(.full),
                    ipv6: probe(.limited, stage: .connect, error: "timed out"), result: .full, failedStage: nil),
        CombineCase(name: "IPv4 broken: IPv6 full wins", ipv4: probe(.limited, stage: .connect), ipv6: probe(.full),
                    result: .full, failedStage: nil),
        CombineCase(name: "a portal on one does not hide full on the other", ipv4: probe(.portal), ipv6: probe(.full),
                    result: .full, failedStage: nil),
        CombineCase(name: "resolver dead on both", ipv4: probe(.limited, stage: .resolve),
                    ipv6: probe(.limited, stage: .resolve), result: .limited, failedStage: .resolve),
        CombineCase(name: "IPv6 only", ipv4: nil, ipv6: probe(.full), result: .full, failedStage: nil),
        CombineCase(name: "IPv4 only, TLS failed", ipv4: probe(.limited, stage: .tls), ipv6: nil, result: .limited,
                    failedStage: .tls),
        CombineCase(name: "nothing checked", ipv4: nil, ipv6: nil, result: nil, failedStage: nil),
    ]

    @Test(arguments: combineCases)
    func combined(_ c: CombineCase) {
        let probe = ProbeVerdict.combined(ipv4: c.ipv4, ipv6: c.ipv6)
        #expect(probe?.result == c.result)
        #expect(probe?.failedStage == c.failedStage)
        #expect(probe?.ipv4Result == c.ipv4?.result)
        #expect(probe?.ipv6Result == c.ipv6?.result)
    }

    @Test func failedStageOfEachFailure() {
        let expected: [ProbeFailure.Kind: ProbeStage?] = [
            .dnsFailure: .resolve, .tls: .tls, .refused: .connect, .unreachable: .connect,
            .timeout: .request, .reset: .request, .malformed: .request, .unsupported: nil, .other: nil,
        ]
        for kind in ProbeFailure.Kind.allCases {
            #expect(ProbeFailure(kind, "x").failedStage == expected[kind] ?? nil, "\(kind)")
        }
        // A named stage wins over the kind's; `at` names one only where none is named yet.
        #expect(ProbeFailure(.timeout, "x", stage: .connect).failedStage == .connect)
        #expect(ProbeFailure(.timeout, "x").at(.tls).failedStage == .tls)
        #expect(ProbeFailure(.timeout, "x", stage: .resolve).at(.connect).failedStage == .resolve)
    }

    @Test func verdictCarriesTheStage() {
        let resolverDead = ProbeVerdict.probe(url: url, expectedResponse: "",
                                              outcome: .failure(ProbeFailure(.dnsFailure, "timed out", stage: .resolve)),
                                              checkedAt: t0)
        #expect(resolverDead.result == .limited)
        #expect(resolverDead.failedStage == .resolve)
        let answered = ProbeVerdict.probe(url: url, expectedResponse: "",
                                          outcome: .response(HTTPResponse(status: 302, headers: [.init(name: "Location", value: "/login")])),
                                          checkedAt: t0)
        #expect(answered.result == .portal)
        #expect(answered.failedStage == nil)
        let unsupported = ProbeVerdict.probe(url: url, expectedResponse: "",
                                             outcome: .failure(ProbeFailure(.unsupported, "ftp")), checkedAt: t0)
        #expect(unsupported.result == .unknown)
        #expect(unsupported.failedStage == nil)
    }

    @Test func eachFamilyFromItsOwnCheck() throws {
        let status = reachable(ipv4: true, ipv6: true)
        let path = try #require(ProbePath(status))
        let checked = try #require(ProbeVerdict.combined(ipv4: probe(.full), ipv6: probe(.limited, stage: .connect)))
        let decided = ConnectivityRule.apply(to: status, previous: nil, verdict: .init(probe: checked, path: path), now: t0)
        #expect(decided.connectivity == .full)
        #expect(decided.ipv4Connectivity == .full)
        #expect(decided.ipv6Connectivity == .limited)
        #expect(decided.isConsistent)

        // IPv6 comes back: only its field (and the probe's verdict beside it) changes.
        let healed = try #require(ProbeVerdict.combined(ipv4: probe(.full), ipv6: probe(.full)))
        let later = ConnectivityRule.apply(to: status, previous: decided, verdict: .init(probe: healed, path: path), now: t0)
        #expect(later.changes(from: decided) == [.ipv6Connectivity])
    }

    @Test func familyWithoutPathIsNoneAndNotChecked() throws {
        let status = reachable(ipv4: false, ipv6: true)
        let path = try #require(ProbePath(status))
        #expect(!path.ipv4 && path.ipv6)
        let checked = try #require(ProbeVerdict.combined(ipv4: nil, ipv6: probe(.full)))
        let decided = ConnectivityRule.apply(to: status, previous: nil, verdict: .init(probe: checked, path: path), now: t0)
        #expect(decided.connectivity == .full)
        #expect(decided.ipv4Connectivity == .none)
        #expect(decided.ipv6Connectivity == .full)
    }

    @Test func notCheckedYetIsUnknownAndNotReachableIsNone() throws {
        let status = reachable(ipv4: true, ipv6: true)
        let fresh = ConnectivityRule.apply(to: status, previous: nil, verdict: nil, now: t0)
        #expect(fresh.connectivity == .unknown)
        #expect(fresh.ipv4Connectivity == .unknown && fresh.ipv6Connectivity == .unknown)
        let gone = ConnectivityRule.apply(to: Status.initial(since: t0), previous: fresh, verdict: nil, now: t0)
        #expect(gone.ipv4Connectivity == .none && gone.ipv6Connectivity == .none)
        #expect(Set(gone.changes(from: fresh)).isSuperset(of: [.connectivity, .ipv4Connectivity, .ipv6Connectivity]))
    }

    /// IPv6 alone, and the check's answer came from a DNS64-synthesized address: `nat64`.
    @Test func dns64MakesTheNAT64Flag() throws {
        let status = reachable(ipv4: false, ipv6: true)
        let path = try #require(ProbePath(status))
        var checked = probe(.full)
        checked.nat64 = true
        let combined = try #require(ProbeVerdict.combined(ipv4: nil, ipv6: checked))
        let decided = ConnectivityRule.apply(to: status, previous: nil, verdict: .init(probe: combined, path: path), now: t0)
        #expect(decided.flags.contains(.nat64))
        #expect(decided.ipv6Connectivity == .full && decided.ipv4Connectivity == .none)
        // With an IPv4 path of its own the network is not IPv6-only: no flag from DNS64.
        let dual = reachable(ipv4: true, ipv6: true)
        let dualPath = ProbePath(dual)
        #expect(dualPath != nil)
        let both = ConnectivityRule.apply(to: dual, previous: nil, verdict: .init(probe: combined, path: dualPath), now: t0)
        #expect(!both.flags.contains(.nat64))
    }

    @Test func wireRoundTripAndOlderDaemon() throws {
        var status = reachable(ipv4: true, ipv6: true)
        status.connectivity = .full; status.ipv4Connectivity = .full; status.ipv6Connectivity = .limited
        status.probe = ProbeVerdict.combined(ipv4: probe(.full), ipv6: probe(.limited, stage: .resolve))
        let data = try WireJSON.encoder().encode(status)
        let decoded = try WireJSON.decoder().decode(Status.self, from: data)
        #expect(decoded == status)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""ipv6Connectivity":"limited""#))
        #expect(text.contains(#""ipv6Result":"limited""#))

        // A daemon from before: its one verdict stands for each family with a path.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["ipv4Connectivity"] = nil; object["ipv6Connectivity"] = nil; object["ipv6"] = false
        let old = try WireJSON.decoder().decode(Status.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(old.ipv4Connectivity == .full)
        #expect(old.ipv6Connectivity == .none)
    }
}
