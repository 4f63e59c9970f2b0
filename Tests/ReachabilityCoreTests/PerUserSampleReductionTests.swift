import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// One vote per user: the sockets of one dump, by owner, reduced to one sample per uplink.
@Suite struct PerUserSampleReductionTests {
    static let eth0 = 2, wwan0 = 5
    static let app: UInt32 = 1000, nobody: UInt32 = 65534

    static func sample(_ uplink: Int = eth0, rtt: Double, minRtt: Double? = nil, sent: UInt64? = 100, lost: UInt64 = 0,
                       bytes: UInt64? = 1_000) -> QualitySample {
        QualitySample(interfaceIndex: uplink, source: .passive, rttMs: rtt, minRttMs: minRtt ?? rtt * 0.8,
                      segmentsSent: sent, segmentsRetransmitted: lost, bytesReceived: bytes)
    }

    /// An estimator with eth0 and wwan0 up, fed dumps every 10 s.
    struct Estimator {
        var estimator = LinkQualityEstimator()
        var now = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 1000)
        private var last: TimeInterval?

        init() {
            estimator.uplinks([QualityUplink(index: eth0, name: "eth0", technology: .init(kind: .ethernet)),
                               QualityUplink(index: wwan0, name: "wwan0", technology: .init(kind: .ethernet))], now: now)
        }

        mutating func dump(_ samples: [Int: [QualitySample]], after seconds: TimeInterval = 10) {
            now = now.adding(seconds)
            _ = estimator.tick(now: now)
            _ = estimator.measured(QualityDump(uptime: now.uptime, interval: last.map { now.uptime - $0 }, samples: samples), now: now)
            last = now.uptime
        }

        func quality(_ index: Int = eth0) -> LinkQuality? { estimator.quality(for: index) }
    }

    // MARK: Examples

    @Test func oneSocketIsItsOwnSample() {
        let one = Self.sample(rtt: 61.5, minRtt: 40, sent: 20, lost: 2, bytes: 10_000)
        #expect(PerUserSampleReduction.reduce([(Self.app, one)]) == [Self.eth0: [one]])
    }

    @Test func aUsersVoteIsTheMedianOfItsSocketsAndItsOwnLoss() {
        let sockets: [(UInt32, QualitySample)] = [
            (Self.app, Self.sample(rtt: 40, sent: 100, lost: 0, bytes: 10)),
            (Self.app, Self.sample(rtt: 90, sent: 300, lost: 30, bytes: 20)),
            (Self.app, Self.sample(rtt: 60, minRtt: 12, sent: 0, lost: 0, bytes: 30)),
        ]
        let reduced = PerUserSampleReduction.reduce(sockets)
        #expect(reduced == [Self.eth0: [QualitySample(interfaceIndex: Self.eth0, source: .passive, rttMs: 60, minRttMs: 12,
                                                      segmentsSent: 400, segmentsRetransmitted: 30, bytesReceived: 60)]])
    }

    /// Two users: the better of the two, for RTT and for loss each on its own.
    @Test func twoUsersGiveTheBetterOfTheirVotes() {
        let sockets: [(UInt32, QualitySample)] = [
            (Self.app, Self.sample(rtt: 50, sent: 40, lost: 4)),
            (Self.nobody, Self.sample(rtt: 2000, sent: 10_000, lost: 0)),
        ]
        let reduced = PerUserSampleReduction.reduce(sockets)[Self.eth0]?.first
        #expect(reduced?.rttMs == 50)
        #expect(reduced?.segmentsSent == 10_000 && reduced?.segmentsRetransmitted == 0,
                "the loss is the counts of the user whose ratio won: \(String(describing: reduced))")
    }

    @Test func eachUplinkCountsItsOwnVotes() {
        let reduced = PerUserSampleReduction.reduce([(Self.app, Self.sample(Self.eth0, rtt: 30)),
                                                     (Self.nobody, Self.sample(Self.wwan0, rtt: 900)),
                                                     (Self.nobody, Self.sample(Self.eth0, rtt: 5000))])
        #expect(reduced[Self.eth0]?.first?.rttMs == 30)
        #expect(reduced[Self.wwan0]?.first?.rttMs == 900)
        #expect(reduced.values.allSatisfy { $0.count == 1 })
    }

    @Test func withoutCountersTheSampleHasNone() {
        let reduced = PerUserSampleReduction.reduce([(Self.app, Self.sample(rtt: 30, sent: nil, bytes: nil))])
        #expect(reduced[Self.eth0]?.first?.segmentsSent == nil && reduced[Self.eth0]?.first?.bytesReceived == nil)
        #expect(PerUserSampleReduction.reduce([(Self.app, Self.sample(rtt: 0)), (Self.app, Self.sample(rtt: .nan))]).isEmpty,
                "no RTT, no sample")
    }

    // MARK: Properties

    /// Any number of slow or lossy sockets of one user (1…1000, each sending far more than the
    /// app), beside one or two other users whose traffic works: the sample is a working one and
    /// the class through the estimator stays good for three minutes. Summing or averaging the
    /// sockets, or taking the worse middle vote, fails it.
    @Test(arguments: 0..<48)
    func manySocketsOfOneUserNeverOutvoteAnotherUsersWorkingTraffic(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 11)
        let count = [1, 2, 1000, 999][safe: seed] ?? Int.random(in: 1...1000, using: &rng)
        let slow = seed % 3 != 1, lossy = seed % 3 != 0
        let honest: [UInt32] = seed % 2 == 0 ? [Self.app] : [Self.app, 1001]
        var estimator = Estimator()
        for dump in 0..<18 {
            var sockets: [(UInt32, QualitySample)] = []
            var honestRtts: [Double] = []
            for uid in honest {
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let rtt = Double.random(in: 20...150, using: &rng)
                    honestRtts.append(rtt)
                    sockets.append((uid, Self.sample(rtt: rtt, sent: UInt64.random(in: 1...60, using: &rng), lost: 0)))
                }
            }
            for _ in 0..<count {
                let sent = UInt64.random(in: 500...5000, using: &rng)
                let rtt = slow ? Double.random(in: 1500...5000, using: &rng) : Double.random(in: 20...150, using: &rng)
                let lost = lossy ? UInt64(Double(sent) * Double.random(in: 0.2...1, using: &rng)) : 0
                sockets.append((Self.nobody, Self.sample(rtt: rtt, sent: sent, lost: lost)))
            }
            sockets.shuffle(using: &rng)
            let reduced = PerUserSampleReduction.reduce(sockets)
            let sample = reduced[Self.eth0]?.first
            #expect(reduced[Self.eth0]?.count == 1)
            #expect((sample?.rttMs ?? .infinity) <= (honestRtts.max() ?? 0),
                    "seed \(seed), dump \(dump): \(count) sockets of one user; \(String(describing: sample))")
            #expect(sample?.segmentsRetransmitted == 0, "seed \(seed), dump \(dump): \(String(describing: sample))")
            estimator.dump(reduced)
            let quality = estimator.quality()
            #expect(quality?.level == .good && quality?.effectiveType == .fourG,
                    "seed \(seed), dump \(dump), \(count) sockets: \(String(describing: quality))")
        }
    }

    /// With one user, that user's own step from 50 ms to 1.5 s (any number of sockets, a little
    /// jitter) shows as 2g through the estimator within a minute, as it does without the
    /// reduction.
    @Test(arguments: 0..<24)
    func oneUsersOwnStepStillShows(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &+ 0xA11CE)
        let sockets = seed == 0 ? 1 : Int.random(in: 1...50, using: &rng)
        var reduced = Estimator(), unreduced = Estimator()
        var shownAt: (reduced: Int?, unreduced: Int?)
        for dump in 0..<18 {
            let base = dump < 12 ? 50.0 : 1500.0
            let samples = (0..<sockets).map { _ in
                Self.sample(rtt: base * Double.random(in: 0.95...1.05, using: &rng), sent: UInt64.random(in: 20...200, using: &rng))
            }
            reduced.dump(PerUserSampleReduction.reduce(samples.map { (Self.app, $0) }))
            unreduced.dump([Self.eth0: samples])
            if dump == 11 {
                #expect(reduced.quality()?.effectiveType == .fourG, "seed \(seed): before the step")
            }
            if dump >= 12 {
                if shownAt.reduced == nil, reduced.quality()?.effectiveType == .twoG { shownAt.reduced = dump - 11 }
                if shownAt.unreduced == nil, unreduced.quality()?.effectiveType == .twoG { shownAt.unreduced = dump - 11 }
            }
        }
        let after = try #require(shownAt.reduced, "seed \(seed), \(sockets) sockets: never 2g")
        #expect(after <= 6, "seed \(seed): 2g only after \(after) dumps")
        #expect(after <= (shownAt.unreduced ?? 0) + 1, "seed \(seed): \(shownAt)")
        #expect(reduced.quality()?.level == .minimal)
    }

    /// A user's sockets bound to a device (SO_BINDTODEVICE) and routed out of it are one vote
    /// there, and no vote on the uplink their routes would have taken: through the book, one
    /// user's slow sockets, some bound, some routed, beside another user's working one.
    @Test(arguments: 0..<24)
    func aDeviceBoundSocketCountsOnceForItsDevice(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 0xB0B)
        let bound = Int.random(in: 1...20, using: &rng), routed = seed % 2 == 0 ? 0 : Int.random(in: 1...20, using: &rng)
        var book = PassiveSampleBook()
        // 198.51.100.0/24 leaves by wwan0, everything else by eth0.
        let route = { (query: SockDiagRouteQuery) -> Int? in
            query.destination.hasPrefix(AddressBits(bytes: [198, 51, 100, 0]), length: 24) ? Self.wwan0 : Self.eth0
        }
        func socket(_ cookie: UInt64, uid: UInt32, peer: [UInt8], rttMs: Double, received: UInt64, bound: Int = 0) -> SockDiagRecord {
            SockDiagRecord(family: .ipv4, source: AddressBits(bytes: [10, 0, 0, 2]), sourcePort: 40_000,
                           destination: AddressBits(bytes: peer), destinationPort: 443, boundInterface: bound, cookie: cookie, uid: uid,
                           info: TCPInfo(rttMicroseconds: UInt32(rttMs * 1000), totalRetransmits: 0, bytesAcked: 0,
                                         bytesReceived: received, segmentsOut: UInt32(received / 100), minRttMicroseconds: 10_000))
        }
        func dump(_ received: UInt64) -> [SockDiagRecord] {
            var records: [SockDiagRecord] = []
            // Bound to wwan0, to peers whose route is eth0's.
            for i in 0..<bound {
                records.append(socket(UInt64(i), uid: Self.nobody, peer: [192, 0, 2, UInt8(i)], rttMs: 2000, received: received, bound: Self.wwan0))
            }
            for i in 0..<routed {
                records.append(socket(UInt64(100 + i), uid: Self.nobody, peer: [198, 51, 100, UInt8(i)], rttMs: 2000, received: received))
            }
            records.append(socket(500, uid: Self.app, peer: [198, 51, 100, 200], rttMs: 50, received: received))
            records.append(socket(501, uid: Self.app, peer: [192, 0, 2, 200], rttMs: 30, received: received))
            return records.shuffled(using: &rng)
        }
        _ = book.record(dump(1_000), uptime: 0, ownPrefixes: [:], uplink: route)
        let samples = book.record(dump(5_000), uptime: 10, ownPrefixes: [:], uplink: route).samples
        #expect(samples[Self.wwan0]?.first?.rttMs == 50, "seed \(seed): \(bound) bound, \(routed) routed: \(samples)")
        #expect(samples[Self.eth0]?.first?.rttMs == 30)
        #expect(samples[Self.eth0]?.first?.bytesReceived == 4_000, "the bound sockets count nowhere else: \(samples)")
        #expect(samples[Self.wwan0]?.first?.bytesReceived == UInt64(bound + routed + 1) * 4_000, "all bytes carried count")
    }

    /// The review's case end to end in the estimator: 100 sockets of `nobody` to a host at 2 s
    /// and one of its sockets losing 20 % of 64 KiB a second, beside an app at 50 ms, for three
    /// minutes: good throughout.
    @Test func aHundredSlowSocketsAndALossyOneBesideAnAppStayGood() {
        var estimator = Estimator()
        for dump in 0..<18 {
            var sockets: [(UInt32, QualitySample)] = (0..<100).map { _ in (Self.nobody, Self.sample(rtt: 2000, sent: 4)) }
            sockets.append((Self.nobody, Self.sample(rtt: 60, sent: 450, lost: 90, bytes: 0)))
            sockets.append((Self.app, Self.sample(rtt: 50, sent: 25)))
            estimator.dump(PerUserSampleReduction.reduce(sockets))
            #expect(estimator.quality()?.level == .good, "dump \(dump): \(String(describing: estimator.quality()))")
        }
    }
}

private extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
