import Foundation
import Testing
@testable import ReachabilityCore
import TestSupport

/// The estimator's promises over random runs: no flapping around a threshold, monotone in RTT
/// and in loss, the radio cap, the idle timing, and how fast a step shows.
@Suite struct LinkQualityEstimatorPropertyTests {
    static let thresholds: [Double] = [204, 1280, 1870]

    /// RTT alternating across a threshold every 5 s, dumps about every 10 s (the sampler's
    /// timer, drifting by up to a second, or any period from 2 to 15 s): at most one change of
    /// class a minute. (In step with the dumps the alternation looks like a link that keeps
    /// changing for minutes at a time: only the reversal hold keeps it to one a minute.)
    @Test(arguments: 0..<40)
    func noFlappingAroundAThreshold(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9 &+ 3)
        let threshold = Self.thresholds[seed % Self.thresholds.count]
        // Across this threshold only (within the neighbouring ones).
        let low = threshold * Double.random(in: 0.7...0.97, using: &rng)
        let high = threshold * Double.random(in: 1.03...1.4, using: &rng)
        let phase = Double.random(in: 0..<10, using: &rng)
        let period = seed % 4 == 3 ? Double.random(in: 2...15, using: &rng) : 10
        var driver = QualityDriver()
        driver.run(for: 120) { _ in low }
        let start = driver.now.uptime
        let warmUp = driver.changes.count
        for _ in 0..<Int(1800 / period) {
            driver.advance(period + Double.random(in: -1...1, using: &rng))
            let t = driver.now.uptime - start + phase
            driver.dump(rtt: Int(t / 5) % 2 == 0 ? low : high, sockets: Int.random(in: 1...4, using: &rng))
        }
        let times = driver.changes.dropFirst(max(warmUp - 1, 0)).map(\.uptime)
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(b - a >= 60, "seed \(seed): changes at \(a - start) and \(b - start) (low \(low), high \(high))")
        }
    }

    /// Random RTT and loss histories: a history with every RTT (or every loss) at least as high
    /// never has a better class at any moment. (Without the reversal hold, which may keep one of
    /// the two in its class a little longer; `steadyRTTIsMonotone` has it.)
    @Test(arguments: 0..<40)
    func monotoneInRTTAndLoss(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 101)
        var configuration = LinkQualityEstimator.Configuration()
        configuration.reversalHold = 0
        var better = QualityDriver(configuration), worse = QualityDriver(configuration)
        let rttFactor = seed % 2 == 0 ? Double.random(in: 1...3, using: &rng) : 1
        let extraLoss = seed % 2 == 1 ? UInt64.random(in: 1...40, using: &rng) : 0
        var rtt = Double.random(in: 20...3000, using: &rng)
        for step in 0..<200 {
            let seconds = Double([2, 5, 10, 10, 10, 30, 120].randomElement(using: &rng) ?? 10)
            better.advance(seconds); worse.advance(seconds)
            if Int.random(in: 0..<10, using: &rng) < 2 { rtt = Double.random(in: 20...3000, using: &rng) }
            let jitter = Double.random(in: 0.8...1.2, using: &rng)
            let lost = UInt64.random(in: 0...30, using: &rng)
            if Int.random(in: 0..<10, using: &rng) < 8 {
                better.dump(rtt: rtt * jitter, sent: 200, lost: lost)
                worse.dump(rtt: rtt * jitter * rttFactor, sent: 200, lost: min(lost + extraLoss, 200))
            } else {
                better.idleDump(); worse.idleDump()
            }
            #expect(worse.rank.level <= better.rank.level && worse.rank.type <= better.rank.type,
                    "seed \(seed) step \(step): \(String(describing: worse.quality)) vs \(String(describing: better.quality))")
        }
    }

    /// A steady RTT (and loss) gives a class no better than a lower one's, with the defaults.
    @Test(arguments: 0..<20)
    func steadyRTTIsMonotone(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 4242)
        let rtts = (0..<12).map { _ in Double.random(in: 5...4000, using: &rng) }.sorted()
        let lost = UInt64.random(in: 0...30, using: &rng)
        let classes = rtts.map { rtt -> (Int, Int) in
            var driver = QualityDriver()
            driver.run(for: 300) { _ in rtt * Double.random(in: 0.95...1.05, using: &rng) }
            for _ in 0..<30 { driver.advance(10); driver.dump(rtt: rtt, sent: 200, lost: lost) }
            return driver.rank
        }
        for (a, b) in zip(classes, classes.dropFirst()) {
            #expect(b.0 <= a.0 && b.1 <= a.1, "seed \(seed): \(rtts) → \(classes)")
        }
        var losses = [UInt64](repeating: 0, count: 8).map { _ in UInt64.random(in: 0...60, using: &rng) }
        losses.sort()
        let byLoss = losses.map { lost -> Int in
            var driver = QualityDriver()
            for _ in 0..<60 { driver.advance(10); driver.dump(rtt: 40, sent: 200, lost: lost) }
            return driver.rank.level
        }
        #expect(zip(byLoss, byLoss.dropFirst()).allSatisfy { $1 <= $0 }, "seed \(seed): \(losses) → \(byLoss)")
    }

    /// Whatever the traffic, a radio at one bar or none keeps the uplink at minimal, at most 2g.
    @Test(arguments: 0..<20)
    func theRadioCapHolds(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 7)
        var driver = QualityDriver(technology: .init(kind: .wwan, generation: .g4),
                                   signal: RadioSignal(technology: "lte", rsrp: -125, level: seed % 2))
        for _ in 0..<100 {
            driver.advance(Double.random(in: 1...60, using: &rng))
            if Bool.random(using: &rng) {
                driver.dump(rtt: Double.random(in: 5...300, using: &rng))
            }
            #expect(driver.quality?.level == .minimal)
            #expect((driver.quality?.effectiveType).map { $0 <= .twoG } ?? true)
        }
    }

    /// Stale exactly `staleAfter` after the last measurement, unknown `unknownAfter` after it,
    /// for configured times too.
    @Test(arguments: 0..<20)
    func staleAndUnknownTiming(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 55)
        let stale = Double.random(in: 20...400, using: &rng)
        let configuration = LinkQualityEstimator.Configuration(staleAfter: stale, unknownAfter: stale * Double.random(in: 1.5...4, using: &rng))
        var driver = QualityDriver(configuration)
        var last = driver.now.uptime
        for _ in 0..<60 {
            let pause = Double.random(in: 1...(configuration.unknownAfter * 1.3), using: &rng)
            let probe = driver.now.uptime + pause
            driver.advance(pause)
            let idle = probe - last
            if idle >= configuration.unknownAfter {
                #expect(driver.quality?.level == .unknown, "seed \(seed): idle \(idle)")
            } else {
                #expect(driver.quality?.level != .unknown && driver.quality?.stale == (idle >= configuration.staleAfter),
                        "seed \(seed): idle \(idle), \(String(describing: driver.quality))")
            }
            if Bool.random(using: &rng) {
                driver.dump(rtt: Double.random(in: 10...500, using: &rng))
                last = driver.now.uptime
            }
        }
    }

    /// At one dump per 10 s, from a steady class: a step worse shows within 30 s, a step
    /// better within 60 s (and not before 30 s).
    @Test(arguments: 0..<30)
    func stepsShowInTime(seed: Int) {
        var rng = SplitMix64(seed: UInt64(seed) &+ 999)
        let threshold = Self.thresholds[seed % Self.thresholds.count]
        let fast = threshold * Double.random(in: 0.2...0.85, using: &rng)
        let slow = threshold * Double.random(in: 1.15...1.9, using: &rng)
        var driver = QualityDriver()
        driver.run(for: 300) { _ in fast }
        let before = driver.quality
        var step = driver.now.uptime
        driver.run(for: 120) { _ in slow }
        let worse = driver.changes.first { $0.uptime > step }
        #expect(worse.map { $0.uptime - step <= 30 } == true, "seed \(seed): \(fast) → \(slow): \(String(describing: worse))")
        #expect(worse.map { $0.quality.map { $0.effectiveType! < before!.effectiveType! } == true } == true)
        driver.run(for: 300) { _ in slow }
        step = driver.now.uptime
        driver.run(for: 120) { _ in fast }
        let better = driver.changes.first { $0.uptime > step }
        #expect(better.map { $0.uptime - step <= 60 && $0.uptime - step >= 30 } == true,
                "seed \(seed): \(slow) → \(fast): \(String(describing: better))")
        #expect(driver.quality?.effectiveType == before?.effectiveType)
    }
}
