import Foundation
import Testing
@testable import ReachabilityCore

/// `Status` keeps its fields in one shared box; it must still behave as a plain value.
@Suite struct StatusValueTests {
    typealias F = SimulationFixtures

    @Test func aCopyIsTheSameValueUntilWritten() {
        let original = F.online
        var copy = original
        #expect(copy.isCopy(of: original) && copy == original)
        #expect(copy.changes(from: original).isEmpty)
        copy.primary?.addresses.append("10.0.0.3/24")
        copy.interfaces[0].carrier = false
        // The original is untouched by writes to its copy, and the copy has what was written.
        #expect(original.primary?.addresses == ["10.0.0.2/24"] && original.interfaces[0].carrier)
        #expect(copy.primary?.addresses == ["10.0.0.2/24", "10.0.0.3/24"] && !copy.interfaces[0].carrier)
        #expect(!copy.isCopy(of: original) && copy != original)
        #expect(copy.changes(from: original) == [.interfaces, .primary])
    }

    @Test func equalFieldsAreEqualWithoutBeingACopy() {
        let rebuilt = Status(status: F.online.status, reachable: F.online.reachable, connectivity: F.online.connectivity,
                             primary: F.online.primary, vpn: nil, cellular: nil, expensive: false, ipv4: true,
                             ipv6: false, gateways: F.online.gateways, flags: F.online.flags,
                             interfaces: F.online.interfaces, probe: F.online.probe, since: F.online.since)
        #expect(rebuilt == F.online && !rebuilt.isCopy(of: F.online))
        #expect(rebuilt.changes(from: F.online).isEmpty && !rebuilt.differs(from: F.online))
    }

    @Test func eachWriteOfASharedValueLeavesTheOtherCopies() {
        var status = Status.initial(since: F.t0)
        let before = status
        status.reachable = true
        let afterFirstWrite = status
        status.gateways.append("10.0.0.1")
        status.gateways.append("fe80::1")
        #expect(before.reachable == false && before.gateways.isEmpty)
        #expect(afterFirstWrite.reachable && afterFirstWrite.gateways.isEmpty)
        #expect(status.reachable && status.gateways == ["10.0.0.1", "fe80::1"])
    }

    /// Copies handed to other threads and written there leave every other copy as it was.
    @Test func copiesWrittenOnOtherThreadsStayApart() async {
        let shared = F.online
        let results = await withTaskGroup(of: (Int, Status).self) { group in
            for i in 0..<8 {
                group.addTask {
                    var mine = shared
                    for _ in 0..<1_000 { mine.gateways = ["10.0.\(i).1"] }
                    return (i, mine)
                }
            }
            var out: [Int: Status] = [:]
            for await (i, status) in group { out[i] = status }
            return out
        }
        #expect(shared.gateways == ["10.0.0.1"])
        for i in 0..<8 { #expect(results[i]?.gateways == ["10.0.\(i).1"]) }
    }
}
