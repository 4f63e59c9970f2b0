import FoundationEssentials

extension LinkQualityEstimator {
    /// The estimator's constants; the defaults are the contract's (Chromium's thresholds,
    /// Apple's levels, the hysteresis and idle times). `[LinkQuality]` sets the times.
    public struct Configuration: Equatable, Sendable {
        /// Seconds after which a sample counts half as much as a new one in the median.
        public var halfLife: TimeInterval = 20
        /// Samples older than this (seconds) are dropped: their weight is below 2 %.
        public var sampleHorizon: TimeInterval = 120
        /// At most this many samples kept per uplink, and per uplink from one dump (a dump of
        /// thousands of sockets keeps evenly spaced quantiles, each weighing for its share).
        public var maximumSamples = 512
        public var maximumSamplesPerDump = 64
        /// Fewer samples than this: nothing measured (the class comes from the radio or the
        /// technology, or is unknown).
        public var minimumSamples = 1
        /// Chromium's transport-RTT thresholds, milliseconds: at or above each, that type.
        public var slow2gRttMs: Double = 1870
        public var twoGRttMs: Double = 1280
        public var threeGRttMs: Double = 204
        /// Apple's loss bands, percent: below `goodLossPercent` good; at or above
        /// `minimalLossPercent` minimal; between, moderate.
        public var goodLossPercent: Double = 2
        public var minimalLossPercent: Double = 10
        /// Loss counts only over at least this many segments sent (weighted like the samples):
        /// one retransmission among a handful says nothing of the link.
        public var minimumSegmentsForLoss: Double = 50
        /// The hysteresis margin: worse beyond a threshold by this fraction, better within it by it.
        public var margin: Double = 0.10
        /// Evaluations in a row beyond a threshold before the class turns worse.
        public var worseAfterEvaluations = 2
        /// Seconds within a threshold before the class turns better.
        public var betterAfter: TimeInterval = 30
        /// Seconds after a change before a change back the other way.
        public var reversalHold: TimeInterval = 60
        /// Seconds without a measurement before the class is marked stale, then unknown.
        public var staleAfter: TimeInterval = 300
        public var unknownAfter: TimeInterval = 900
        /// A radio level (bars) at or below this caps the class at minimal / `2g`.
        public var radioCapLevel = 1

        public init(staleAfter: TimeInterval = 300, unknownAfter: TimeInterval = 900) {
            self.staleAfter = staleAfter
            self.unknownAfter = unknownAfter
        }

        /// The effective type of a transport RTT (Chromium's thresholds).
        public func effectiveType(rttMs: Double) -> LinkQuality.EffectiveType {
            if rttMs >= slow2gRttMs { return .slow2g }
            if rttMs >= twoGRttMs { return .twoG }
            if rttMs >= threeGRttMs { return .threeG }
            return .fourG
        }

        /// The loss band of a loss in percent.
        func lossBand(percent: Double) -> LossBand {
            if percent >= minimalLossPercent { return .high }
            if percent >= goodLossPercent { return .some }
            return .low
        }

        /// Apple's level of a class: good = `4g` with little loss; moderate = `3g` or some
        /// loss; minimal = `2g`/`slow-2g`, much loss, or a radio at `radioCapLevel` or below.
        func level(type: LinkQuality.EffectiveType, loss: LossBand, radioLevel: Int?) -> LinkQuality.Level {
            if let radioLevel, radioLevel <= radioCapLevel { return .minimal }
            switch (type, loss) {
            case (.slow2g, _), (.twoG, _), (_, .high): return .minimal
            case (.threeG, _), (_, .some): return .moderate
            case (.fourG, .low): return .good
            }
        }

        /// The type a radio alone suggests: no bars `slow-2g`, one `2g`, two `3g`, more as good as
        /// the technology gets.
        func radioType(level: Int, technology: LinkTechnology) -> LinkQuality.EffectiveType {
            let typical = technology.typicalType ?? .fourG
            switch level {
            case ...0: return .slow2g
            case 1: return min(.twoG, typical)
            case 2: return min(.threeG, typical)
            default: return typical
            }
        }
    }

    /// Loss as Apple's levels see it, worst first.
    enum LossBand: Int, Comparable, Hashable, CaseIterable, Sendable {
        case high, some, low
        static func < (a: LossBand, b: LossBand) -> Bool { a.rawValue < b.rawValue }
    }
}
