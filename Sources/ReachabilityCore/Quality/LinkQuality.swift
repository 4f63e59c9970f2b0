import FoundationEssentials

/// How good an uplink is, measured (varlink type `LinkQuality`): Apple's `NWPath.linkQuality`
/// and the web's `navigator.connection.effectiveType`, from the RTT and loss of the traffic that
/// actually crosses the link, reachd's own checks and the modem's radio.
public struct LinkQuality: Codable, Equatable, Hashable, Sendable {
    /// Apple's names and order: `unknown` < `minimal` < `moderate` < `good`.
    public enum Level: String, Codable, Sendable, CaseIterable, Comparable {
        case unknown, minimal, moderate, good

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }

        var rank: Int {
            switch self {
            case .unknown: 0
            case .minimal: 1
            case .moderate: 2
            case .good: 3
            }
        }
    }

    /// The web's names (Chromium's Network Quality Estimator): the seeds' 2G/3G/4G as measured,
    /// not as the radio calls itself.
    public enum EffectiveType: String, Codable, Sendable, CaseIterable, Comparable {
        case slow2g = "slow-2g"
        case twoG = "2g"
        case threeG = "3g"
        case fourG = "4g"

        public static func < (lhs: EffectiveType, rhs: EffectiveType) -> Bool { lhs.rank < rhs.rank }

        var rank: Int {
            switch self {
            case .slow2g: 0
            case .twoG: 1
            case .threeG: 2
            case .fourG: 3
            }
        }
    }

    /// Where the figures come from, best first.
    public enum Source: String, Codable, Sendable, CaseIterable {
        /// The TCP sockets of all apps that moved data over the uplink (sock_diag `tcp_info`).
        case passive
        /// reachd's own connectivity checks.
        case probe
        /// The modem's signal (ModemManager `Modem.Signal`).
        case radio
        /// A guess from the link's technology at link-up, before anything was measured.
        case `default`
    }

    public var level: Level
    public var effectiveType: EffectiveType?
    /// The time-weighted median smoothed RTT, milliseconds.
    public var rttMs: Double?
    /// The lowest RTT seen among the samples, milliseconds.
    public var minRttMs: Double?
    /// Received throughput of the sockets that moved data, kilobits a second.
    public var downlinkKbps: Double?
    /// Retransmitted over sent segments, percent.
    public var lossPercent: Double?
    /// How many samples the figures rest on.
    public var samples: Int
    public var source: Source
    /// When the last sample was taken (wall clock).
    public var measuredAt: Date
    /// True when nothing was measured for a while: the class is the last one known.
    public var stale: Bool
    /// The cellular radio's signal, when the uplink is a modem that reports one.
    public var signal: RadioSignal?

    public init(level: Level, effectiveType: EffectiveType? = nil, rttMs: Double? = nil, minRttMs: Double? = nil,
                downlinkKbps: Double? = nil, lossPercent: Double? = nil, samples: Int = 0, source: Source,
                measuredAt: Date, stale: Bool = false, signal: RadioSignal? = nil) {
        self.level = level; self.effectiveType = effectiveType; self.rttMs = rttMs; self.minRttMs = minRttMs
        self.downlinkKbps = downlinkKbps; self.lossPercent = lossPercent; self.samples = samples
        self.source = source; self.measuredAt = measuredAt; self.stale = stale; self.signal = signal
    }

    enum CodingKeys: String, CodingKey {
        case level, effectiveType, rttMs, minRttMs, downlinkKbps, lossPercent, samples, source, measuredAt, stale, signal
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        level = try c.decode(Level.self, forKey: .level)
        effectiveType = try c.decodeIfPresent(EffectiveType.self, forKey: .effectiveType)
        rttMs = try c.decodeIfPresent(Double.self, forKey: .rttMs)
        minRttMs = try c.decodeIfPresent(Double.self, forKey: .minRttMs)
        downlinkKbps = try c.decodeIfPresent(Double.self, forKey: .downlinkKbps)
        lossPercent = try c.decodeIfPresent(Double.self, forKey: .lossPercent)
        samples = try c.decode(Int.self, forKey: .samples)
        source = try c.decode(Source.self, forKey: .source)
        measuredAt = try c.decodeTimestamp(forKey: .measuredAt)
        stale = try c.decode(Bool.self, forKey: .stale)
        signal = try c.decodeIfPresent(RadioSignal.self, forKey: .signal)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(level, forKey: .level); try c.encode(effectiveType, forKey: .effectiveType)
        try c.encode(rttMs, forKey: .rttMs); try c.encode(minRttMs, forKey: .minRttMs)
        try c.encode(downlinkKbps, forKey: .downlinkKbps); try c.encode(lossPercent, forKey: .lossPercent)
        try c.encode(samples, forKey: .samples); try c.encode(source, forKey: .source)
        try c.encode(Timestamp.string(from: measuredAt), forKey: .measuredAt)
        try c.encode(stale, forKey: .stale); try c.encode(signal, forKey: .signal)
    }
}
