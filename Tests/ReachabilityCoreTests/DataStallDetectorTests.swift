import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// `DataStallDetector` alone: Android's rule (≥ 10 segments sent since the last received, ≥ 80 %
/// of them retransmissions, any received segment vetoes), the checks it asks for and how they
/// back off, and the per-user reduction of the tallies.
@Suite struct DataStallDetectorTests {
    static let t0 = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 1000)
    static let wlan = DataStallDetector.Uplink(index: 3, expensive: false)
    static let wwan = DataStallDetector.Uplink(index: 5, expensive: true)

    /// A detector that has learned `uplinks` (its first dump).
    static func learned(_ uplinks: [DataStallDetector.Uplink] = [wlan]) -> DataStallDetector {
        var detector = DataStallDetector()
        _ = detector.dumped([:], uplinks: uplinks, interval: nil, now: t0)
        return detector
    }

    static func dead(_ sent: UInt64) -> StallTally { StallTally(sent: sent, received: 0, retransmitted: sent) }

    @Test func unansweredRetransmissionsAreAStallThatIsCheckedAtOnce() throws {
        var detector = Self.learned()
        let decisions = detector.dumped([3: Self.dead(12)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10))
        let stall = try #require(detector.stalls[3])
        #expect(decisions == [.suspected(index: 3, stall), .recheck(index: 3)])
        #expect(stall.method == .tcp && stall.failRate == 1 && stall.sentSinceReceive == 12 && stall.periodMs == 10_000)
        #expect(stall.since == Self.t0.adding(10).wall)
        #expect(stall.recent == [DataStall.Dump(at: Self.t0.adding(10).wall, periodMs: 10_000, sent: 12, received: 0, retransmitted: 12)])
        #expect(stall.summary(now: Self.t0.adding(22).wall) == "stalled 12 s (tcp, 100 % retransmitted)")
    }

    @Test func segmentsAddUpAcrossDumpsUntilOneIsReceived() {
        var detector = Self.learned()
        #expect(detector.dumped([3: Self.dead(6)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10)).isEmpty)
        // 6 + 6 = 12 sent since the last received: suspected.
        let second = detector.dumped([3: Self.dead(6)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(20))
        #expect(second.contains(.recheck(index: 3)) && detector.stalls[3]?.sentSinceReceive == 12)

        var vetoed = Self.learned()
        _ = vetoed.dumped([3: Self.dead(6)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10))
        _ = vetoed.dumped([3: StallTally(sent: 6, received: 1, retransmitted: 6)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(20))
        #expect(vetoed.dumped([3: Self.dead(6)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(30)).isEmpty,
                "one received segment starts the count afresh")
    }

    @Test func belowTheFailRateOrTheMinimumIsNoStall() {
        var detector = Self.learned()
        // 100 sent, 79 retransmitted: under 80 %.
        #expect(detector.dumped([3: StallTally(sent: 100, retransmitted: 79)], uplinks: [Self.wlan], interval: 10,
                                now: Self.t0.adding(10)).isEmpty)
        var few = Self.learned()
        #expect(few.dumped([3: Self.dead(9)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10)).isEmpty)
    }

    @Test func theFirstDumpOfAnUplinkOnlyLearnsIt() {
        var detector = DataStallDetector()
        #expect(detector.dumped([3: Self.dead(50)], uplinks: [Self.wlan], interval: nil, now: Self.t0).isEmpty)
        var coming = Self.learned([])
        #expect(coming.dumped([3: Self.dead(50)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10)).isEmpty,
                "an uplink being set up says nothing in its first dump")
        #expect(!coming.dumped([3: Self.dead(50)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(20)).isEmpty)
    }

    @Test func trafficAnsweredAgainClearsTheStallAndChecks() {
        var detector = Self.learned()
        _ = detector.dumped([3: Self.dead(20)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10))
        let back = detector.dumped([3: StallTally(sent: 30, received: 25, retransmitted: 0)], uplinks: [Self.wlan], interval: 10,
                                   now: Self.t0.adding(20))
        #expect(back == [.cleared(index: 3), .recheck(index: 3)])
        #expect(detector.stalls.isEmpty)
    }

    @Test func aLastingStallIsCheckedWithBackoff() {
        var detector = Self.learned()
        var checks: [TimeInterval] = []
        for second in stride(from: 10.0, through: 400, by: 10) {
            let decisions = detector.dumped([3: Self.dead(15)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(second))
            if decisions.contains(.recheck(index: 3)) { checks.append(second) }
        }
        // At once, then 30, 60, 120 s later (each at the first dump after).
        #expect(checks == [10, 40, 100, 220], "\(checks)")
    }

    @Test func anExpensiveUplinkIsCheckedAtMostOnceAMinute() {
        var detector = Self.learned([Self.wwan])
        var checks: [TimeInterval] = []
        var second = 10.0
        // Stalled, answered, stalled again, answered again: four reasons to check within 40 s.
        for tally in [Self.dead(15), StallTally(sent: 5, received: 5), Self.dead(15), StallTally(sent: 5, received: 5),
                      StallTally(), StallTally(), StallTally(), StallTally()] {
            if detector.dumped([5: tally], uplinks: [Self.wwan], interval: 10, now: Self.t0.adding(second)).contains(.recheck(index: 5)) {
                checks.append(second)
            }
            second += 10
        }
        #expect(checks == [10, 70], "\(checks)")
        for (a, b) in zip(checks, checks.dropFirst()) { #expect(b - a >= 60) }
    }

    @Test func aWorkingCheckRefutesTheStallUntilTrafficIsAnswered() {
        var detector = Self.learned()
        _ = detector.dumped([3: Self.dead(20)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(10))
        #expect(detector.checked(index: 3, connectivity: .full, began: Self.t0.adding(5).uptime).isEmpty,
                "a check begun before the suspicion says nothing of it")
        #expect(detector.checked(index: 3, connectivity: .none, began: Self.t0.adding(10).uptime).isEmpty)
        #expect(detector.checked(index: 3, connectivity: .full, began: Self.t0.adding(11).uptime) == [.cleared(index: 3)])
        for second in stride(from: 20.0, through: 300, by: 10) {
            #expect(detector.dumped([3: Self.dead(20)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(second)).isEmpty,
                    "refuted: no stall, no check at \(second) s")
        }
        _ = detector.dumped([3: StallTally(sent: 2, received: 2)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(310))
        #expect(!detector.dumped([3: Self.dead(20)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(320)).isEmpty)
    }

    @Test func anUplinkThatGoesIsForgottenAndAResetClearsAll() {
        var detector = Self.learned([Self.wlan, Self.wwan])
        _ = detector.dumped([3: Self.dead(20), 5: Self.dead(20)], uplinks: [Self.wlan, Self.wwan], interval: 10, now: Self.t0.adding(10))
        #expect(detector.dumped([:], uplinks: [Self.wwan], interval: 10, now: Self.t0.adding(20)).first == .cleared(index: 3))
        #expect(detector.reset() == [.cleared(index: 5)])
        #expect(detector.stalls.isEmpty)
    }

    @Test func evidenceKeepsTheLastDumps() {
        var detector = Self.learned()
        for second in stride(from: 10.0, through: 100, by: 10) {
            _ = detector.dumped([3: StallTally(sent: UInt64(second), received: 1)], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(second))
        }
        #expect(detector.evidence(3).map(\.tally.sent) == [50, 60, 70, 80, 90, 100])
    }

    /// The rule's promises over random traffic: never a stall while any segment is received
    /// in the dump; more loss never turns a stall into none (monotone); nothing is checked on an
    /// idle uplink.
    @Test func propertiesOverRandomTraffic() {
        var rng = SplitMix64(seed: 0x57a11)
        for _ in 0..<300 {
            var a = Self.learned(), b = Self.learned()
            var second = 0.0
            for _ in 0..<20 {
                second += 10
                let sent = UInt64.random(in: 0...40, using: &rng)
                let retransmitted = UInt64.random(in: 0...sent, using: &rng)
                let received: UInt64 = Int.random(in: 0..<4, using: &rng) == 0 ? UInt64.random(in: 1...5, using: &rng) : 0
                let tally = StallTally(sent: sent, received: received, retransmitted: retransmitted)
                let worse = StallTally(sent: sent, received: received, retransmitted: min(sent, retransmitted + UInt64.random(in: 0...5, using: &rng)))
                let decisionsA = a.dumped([3: tally], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(second))
                _ = b.dumped([3: worse], uplinks: [Self.wlan], interval: 10, now: Self.t0.adding(second))
                if received > 0 {
                    #expect(a.stalls.isEmpty && !decisionsA.contains { if case .suspected = $0 { true } else { false } })
                }
                if a.stalls[3] != nil { #expect(b.stalls[3] != nil, "more retransmissions, no stall") }
                if sent == 0 && received == 0 && a.stalls.isEmpty { #expect(!decisionsA.contains(DataStallDetector.Decision.recheck(index: 3))) }
            }
        }
    }

    /// Each user one vote: one user's dead host does not stall the uplink another user's
    /// traffic crosses; any segment received over it is counted.
    @Test func theTalliesAreReducedPerUser() {
        var reduction = StallTallyReduction()
        for _ in 0..<50 { reduction.add(Self.dead(4), uplink: 3, uid: 1000) }
        reduction.add(StallTally(sent: 10, received: 0, retransmitted: 0), uplink: 3, uid: 1001)
        #expect(reduction.tallies() == [3: StallTally(sent: 10, received: 0, retransmitted: 0)],
                "two users: the better of the two")
        reduction.add(StallTally(sent: 1, received: 3, retransmitted: 0), uplink: 3, uid: 1002)
        reduction.add(StallTally(sent: 5, received: 0, retransmitted: 9), uplink: 4, uid: 1000)
        let tallies = reduction.tallies()
        #expect(tallies[3]?.received == 3)
        #expect(tallies[4] == StallTally(sent: 5, received: 0, retransmitted: 5), "a socket cannot retransmit more than it sent")
    }
}
