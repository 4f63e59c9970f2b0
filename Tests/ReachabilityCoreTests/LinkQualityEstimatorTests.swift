import Foundation
import Testing
@testable import ReachabilityCore

/// One uplink fed like the monitor feeds it: passive dumps, checks, the radio, time.
struct QualityDriver {
    var estimator: LinkQualityEstimator
    var now = ClockReading(wall: Date(timeIntervalSince1970: 1_800_000_000), uptime: 1000)
    let index = 2
    /// Every change of class the estimator reported: when (uptime) and the class after it.
    var changes: [(uptime: TimeInterval, quality: LinkQuality?)] = []
    private var lastDump: TimeInterval?

    init(_ configuration: LinkQualityEstimator.Configuration = .init(), technology: LinkTechnology = .init(kind: .ethernet),
         signal: RadioSignal? = nil) {
        estimator = LinkQualityEstimator(configuration: configuration)
        if estimator.linkUp(QualityUplink(index: index, name: "eth0", technology: technology, signal: signal), now: now) {
            changes.append((now.uptime, quality))
        }
    }

    var quality: LinkQuality? { estimator.quality(for: index) }

    /// A dump now with `sockets` samples of `rtt` (each sent `sent` segments, retransmitted `lost`).
    mutating func dump(rtt: Double, sockets: Int = 1, sent: UInt64 = 200, lost: UInt64 = 0, bytes: UInt64 = 10_000) {
        let samples = (0..<sockets).map { _ in
            QualitySample(interfaceIndex: index, source: .passive, rttMs: rtt, minRttMs: rtt * 0.8, segmentsSent: sent,
                          segmentsRetransmitted: lost, bytesReceived: bytes)
        }
        let dump = QualityDump(uptime: now.uptime, interval: lastDump.map { now.uptime - $0 }, samples: [index: samples])
        lastDump = now.uptime
        if !estimator.measured(dump, now: now).isEmpty { changes.append((now.uptime, quality)) }
    }

    /// A dump in which this uplink moved nothing.
    mutating func idleDump() {
        let dump = QualityDump(uptime: now.uptime, interval: lastDump.map { now.uptime - $0 }, samples: [:])
        lastDump = now.uptime
        if !estimator.measured(dump, now: now).isEmpty { changes.append((now.uptime, quality)) }
    }

    mutating func radio(_ signal: RadioSignal?) {
        if estimator.radio(signal, index: index, now: now) { changes.append((now.uptime, quality)) }
    }

    /// Time passes; the staleness tick runs as the monitor's timer would.
    mutating func advance(_ seconds: TimeInterval) {
        let end = now.uptime + seconds
        while let deadline = estimator.nextDeadline, deadline <= end {
            now = now.adding(max(deadline - now.uptime, 0))
            if !estimator.tick(now: now).isEmpty { changes.append((now.uptime, quality)) }
        }
        now = now.adding(end - now.uptime)
    }

    /// Dumps every `period` seconds for `seconds`, each sample's RTT from `rtt(t)` (t: uptime).
    mutating func run(for seconds: TimeInterval, every period: TimeInterval = 10, rtt: (TimeInterval) -> Double) {
        let end = now.uptime + seconds
        while now.uptime + period <= end + 1e-9 {
            advance(period)
            dump(rtt: rtt(now.uptime))
        }
    }

    /// Level and type, comparable (worst first).
    var rank: (level: Int, type: Int) {
        (quality?.level.rank ?? -1, quality?.effectiveType?.rank ?? -1)
    }
}

/// Each rule of the estimator on its own.
@Suite struct LinkQualityEstimatorTests {
    typealias C = LinkQualityEstimator.Configuration
    static func lte(_ rsrp: Double, _ level: Int) -> RadioSignal { RadioSignal(technology: "lte", rsrp: rsrp, level: level) }

    @Test(arguments: [(50.0, LinkQuality.EffectiveType.fourG), (203.9, .fourG), (204, .threeG), (1279.9, .threeG),
                      (1280, .twoG), (1869.9, .twoG), (1870, .slow2g), (9000, .slow2g)])
    func chromiumThresholds(rtt: Double, type: LinkQuality.EffectiveType) {
        #expect(C().effectiveType(rttMs: rtt) == type)
    }

    @Test func appleLevels() {
        let c = C()
        #expect(c.level(type: .fourG, loss: .low, radioLevel: nil) == .good)
        #expect(c.level(type: .fourG, loss: .low, radioLevel: 4) == .good)
        #expect(c.level(type: .fourG, loss: .some, radioLevel: nil) == .moderate)
        #expect(c.level(type: .threeG, loss: .low, radioLevel: nil) == .moderate)
        #expect(c.level(type: .fourG, loss: .high, radioLevel: nil) == .minimal)
        #expect(c.level(type: .twoG, loss: .low, radioLevel: nil) == .minimal)
        #expect(c.level(type: .slow2g, loss: .low, radioLevel: nil) == .minimal)
        #expect(c.level(type: .fourG, loss: .low, radioLevel: 1) == .minimal)
        #expect(c.level(type: .fourG, loss: .low, radioLevel: 0) == .minimal)
        #expect(c.lossBand(percent: 1.99) == .low && c.lossBand(percent: 2) == .some && c.lossBand(percent: 10) == .high)
    }

    /// At link-up, before anything is measured: the technology's typical class, marked `default`.
    @Test func defaultsAtLinkUp() {
        let cases: [(LinkTechnology, LinkQuality.Level?, LinkQuality.EffectiveType?)] = [
            (.init(kind: .ethernet), .good, .fourG), (.init(kind: .wifi), .good, .fourG),
            (.init(kind: .wwan, generation: .g2), .minimal, .twoG), (.init(kind: .wwan, generation: .g3), .moderate, .threeG),
            (.init(kind: .wwan, generation: .g4), .good, .fourG), (.init(kind: .wwan, generation: .g5), .good, .fourG),
            (.init(kind: .wwan), nil, nil), (.init(kind: .vpn), nil, nil), (.init(kind: .virtual), nil, nil),
        ]
        for (technology, level, type) in cases {
            let driver = QualityDriver(technology: technology)
            #expect(driver.quality?.level == level && driver.quality?.effectiveType == type, "\(technology)")
            if level != nil {
                #expect(driver.quality?.source == .default && driver.quality?.samples == 0 && driver.quality?.rttMs == nil)
            }
        }
    }

    /// The first measurement replaces a guess at once; the next ones go through the hysteresis.
    @Test func theFirstMeasurementIsTakenAtOnce() {
        var driver = QualityDriver()
        driver.advance(10)
        driver.dump(rtt: 400)
        #expect(driver.quality?.level == .moderate && driver.quality?.effectiveType == .threeG)
        #expect(driver.quality?.source == .passive && driver.quality?.rttMs == 400 && driver.quality?.minRttMs == 320)
        #expect(driver.quality?.measuredAt == driver.now.wall && driver.quality?.stale == false)
    }

    /// Worse only after two evaluations beyond the threshold by 10 %: 220 ms (within the margin
    /// of 204) never turns 4g into 3g; 230 ms does, at the second dump that sees it.
    @Test func worseAfterTwoEvaluationsBeyondTheMargin() {
        var driver = QualityDriver()
        driver.run(for: 300) { _ in 50 }
        #expect(driver.quality?.effectiveType == .fourG)
        driver.run(for: 300) { _ in 220 }
        #expect(driver.quality?.effectiveType == .fourG, "within the margin")
        let step = driver.now.uptime
        driver.run(for: 60) { _ in 230 }
        #expect(driver.quality?.effectiveType == .threeG)
        let changed = driver.changes.last { $0.quality?.effectiveType == .threeG }?.uptime ?? .infinity
        #expect(changed - step <= 30, "\(changed - step) s")
    }

    /// Better only after 30 s within the threshold by 10 %.
    @Test func betterAfterThirtySecondsWithinTheMargin() {
        var driver = QualityDriver()
        driver.dump(rtt: 400)
        driver.run(for: 300) { _ in 400 }
        driver.run(for: 300) { _ in 190 }
        #expect(driver.quality?.effectiveType == .threeG, "190 ms is within 10 % of 204")
        let step = driver.now.uptime
        driver.run(for: 120) { _ in 150 }
        #expect(driver.quality?.effectiveType == .fourG && driver.quality?.level == .good)
        let changed = driver.changes.last?.uptime ?? .infinity
        #expect(changed - step >= 30 && changed - step <= 60, "\(changed - step) s")
    }

    /// Loss: retransmitted over sent; 5 % is moderate, 12 % minimal, each after the hysteresis;
    /// a handful of segments says nothing.
    @Test func lossMovesTheLevel() {
        var driver = QualityDriver()
        driver.run(for: 120) { _ in 40 }
        #expect(driver.quality?.level == .good && driver.quality?.lossPercent == 0)
        for _ in 0..<6 { driver.advance(10); driver.dump(rtt: 40, sent: 200, lost: 10) }
        #expect(driver.quality?.level == .moderate && driver.quality?.effectiveType == .fourG)
        #expect(abs((driver.quality?.lossPercent ?? 0) - 5) < 2.5)
        for _ in 0..<12 { driver.advance(10); driver.dump(rtt: 40, sent: 200, lost: 30) }
        #expect(driver.quality?.level == .minimal)
        var few = QualityDriver()
        few.dump(rtt: 40, sent: 3, lost: 2)
        #expect(few.quality?.lossPercent == nil && few.quality?.level == .good)
    }

    /// An idle uplink keeps its class: stale at 5 min, unknown at 15 min without a measurement.
    @Test func idleKeepsItsClassThenGoesStaleThenUnknown() {
        var driver = QualityDriver()
        driver.run(for: 60) { _ in 400 }
        let last = driver.now.uptime
        #expect(driver.estimator.nextDeadline == last + 300)
        for _ in 0..<29 { driver.advance(10); driver.idleDump() }
        #expect(driver.quality?.level == .moderate && driver.quality?.stale == false)
        driver.advance(last + 300 - driver.now.uptime)
        #expect(driver.quality?.level == .moderate && driver.quality?.stale == true)
        #expect(driver.estimator.nextDeadline == last + 900)
        let changes = driver.changes.count
        driver.advance(last + 900 - 0.001 - driver.now.uptime)
        #expect(driver.quality?.level == .moderate && driver.changes.count == changes)
        driver.advance(0.001)
        #expect(driver.quality?.level == .unknown && driver.quality?.effectiveType == nil && driver.quality?.stale == true)
        #expect(driver.changes.count == changes + 1 && driver.estimator.nextDeadline == nil)
        // Measured again: taken at once.
        driver.advance(10)
        driver.dump(rtt: 50)
        #expect(driver.quality?.level == .good && driver.quality?.stale == false)
    }

    /// The default runs out like a measurement.
    @Test func theDefaultGoesStaleThenUnknown() {
        var driver = QualityDriver()
        driver.advance(299)
        #expect(driver.quality?.stale == false)
        driver.advance(1)
        #expect(driver.quality?.stale == true && driver.quality?.level == .good)
        driver.advance(600)
        #expect(driver.quality?.level == .unknown)
    }

    /// The radio: seeds the class while nothing is measured; one bar or none caps it at
    /// minimal / 2g whatever the RTT; after an idle spell the seed, not unknown.
    @Test func theRadioSeedsAndCaps() {
        var driver = QualityDriver(technology: .init(kind: .wwan, generation: .g4), signal: Self.lte(-95, 3))
        #expect(driver.quality?.source == .radio && driver.quality?.level == .good && driver.quality?.effectiveType == .fourG)
        #expect(driver.quality?.signal?.rsrp == -95)
        driver.radio(Self.lte(-110, 2))
        #expect(driver.quality?.level == .moderate && driver.quality?.effectiveType == .threeG)
        driver.run(for: 60) { _ in 40 }
        #expect(driver.quality?.source == .passive && driver.quality?.level == .good)
        driver.radio(Self.lte(-125, 1))
        #expect(driver.quality?.level == .minimal && driver.quality?.effectiveType == .twoG)
        #expect(driver.changes.last?.quality?.level == .minimal)
        driver.radio(Self.lte(-130, 0))
        driver.run(for: 60) { _ in 30 }
        #expect(driver.quality?.level == .minimal && driver.quality?.effectiveType == .twoG)
        driver.radio(Self.lte(-90, 4))
        #expect(driver.quality?.level == .good)
        driver.advance(900)
        #expect(driver.quality?.source == .radio && driver.quality?.level == .good && driver.quality?.stale == false)
    }

    /// Throughput from the bytes received over the dump's interval.
    @Test func downlinkFromBytesOverTheInterval() {
        var driver = QualityDriver()
        driver.dump(rtt: 40, bytes: 0)
        #expect(driver.quality?.downlinkKbps == nil)
        driver.advance(10)
        driver.dump(rtt: 40, sockets: 2, bytes: 625_000)
        #expect(driver.quality?.downlinkKbps == 1000)
    }

    /// A dump of thousands of sockets is thinned to quantiles with the same median.
    @Test func aLargeDumpKeepsItsMedian() {
        var driver = QualityDriver()
        let samples = (0..<3000).map { i in
            QualitySample(interfaceIndex: 2, source: .passive, rttMs: i < 1400 ? 30 : 300)
        }
        _ = driver.estimator.measured(QualityDump(uptime: driver.now.uptime, interval: nil, samples: [2: samples.shuffled()]),
                                      now: driver.now)
        #expect(driver.quality?.effectiveType == .threeG && driver.quality?.samples == 3000)
    }

    /// Samples for an index that is no uplink, and samples without an RTT, change nothing.
    @Test func strayAndEmptySamplesAreIgnored() {
        var driver = QualityDriver()
        let stray = QualityDump(uptime: driver.now.uptime, interval: nil,
                                samples: [7: [QualitySample(interfaceIndex: 7, source: .passive, rttMs: 900)],
                                          2: [QualitySample(interfaceIndex: 2, source: .passive, rttMs: 0),
                                              QualitySample(interfaceIndex: 2, source: .passive, rttMs: .nan)]])
        let changed = driver.estimator.measured(stray, now: driver.now)
        #expect(changed.isEmpty)
        #expect(driver.quality?.source == .default && driver.estimator.quality(for: 7) == nil)
    }

    /// Checks count as samples, halved (connect and request are two round trips).
    @Test func checksAreSamples() {
        var driver = QualityDriver()
        #expect(LinkQualityEstimator.checkRTT(ofRoundTripMs: 800) == 400)
        let changed = driver.estimator.probed(index: 2, rttMs: 400, now: driver.now)
        #expect(changed)
        #expect(driver.quality?.source == .probe && driver.quality?.effectiveType == .threeG)
    }

    /// Down forgets everything; up again starts afresh from the default. A known uplink coming
    /// "up" again keeps its samples.
    @Test func downForgetsUpStartsAfresh() {
        var driver = QualityDriver()
        driver.run(for: 60) { _ in 2000 }
        #expect(driver.quality?.effectiveType == .slow2g)
        let uplink = QualityUplink(index: 2, name: "eth0", technology: .init(kind: .ethernet))
        let upAgain = driver.estimator.linkUp(uplink, now: driver.now)
        #expect(!upAgain)
        #expect(driver.quality?.effectiveType == .slow2g)
        let down = driver.estimator.uplinks([], now: driver.now)
        #expect(down == [2])
        #expect(driver.quality == nil && driver.estimator.indexes.isEmpty)
        let up = driver.estimator.uplinks([uplink], now: driver.now)
        #expect(up == [2])
        #expect(driver.quality?.source == .default && driver.quality?.effectiveType == .fourG)
    }

    /// After a sleep the samples go; the class stays, and a new measurement goes through the
    /// hysteresis from it.
    @Test func forgettingSamplesKeepsTheClass() {
        var driver = QualityDriver()
        driver.run(for: 120) { _ in 50 }
        driver.estimator.forgetSamples()
        #expect(driver.quality?.effectiveType == .fourG)
        driver.advance(10)
        driver.dump(rtt: 400)
        #expect(driver.quality?.effectiveType == .fourG)
        driver.advance(10)
        driver.dump(rtt: 400)
        #expect(driver.quality?.effectiveType == .threeG)
    }

    @Test func halvedIsTwoToTheMinus() {
        for (x, expected) in [(0.0, 1.0), (1, 0.5), (2, 0.25), (0.5, 0.7071067811865476), (3.25, 0.10511205190671431)] {
            #expect(abs(UplinkQualityEstimate.halved(x) - expected) < 1e-12, "\(x)")
        }
        #expect(UplinkQualityEstimate.halved(5000) == 0)
    }
}
