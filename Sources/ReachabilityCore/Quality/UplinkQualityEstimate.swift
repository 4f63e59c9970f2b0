import FoundationEssentials

/// One uplink's share of `LinkQualityEstimator`: its samples, the class they hold, what its
/// radio says and what its technology suggests.
struct UplinkQualityEstimate: Sendable {
    typealias Configuration = LinkQualityEstimator.Configuration

    /// One RTT sample; `weight` > 1 when it stands for several sockets of a large dump.
    struct Sample: Sendable {
        var uptime: TimeInterval
        var rttMs: Double
        var minRttMs: Double
        var weight: Double
        var passive: Bool
    }

    /// What the sockets of one dump sent and retransmitted.
    struct Transfer: Sendable {
        var uptime: TimeInterval
        var sent: Double
        var retransmitted: Double
    }

    /// The class measured samples hold, each part against noise.
    struct Measured: Sendable {
        var type: QualityHysteresis<LinkQuality.EffectiveType>
        var loss: QualityHysteresis<LinkQualityEstimator.LossBand>
    }

    var name: String
    var technology: LinkTechnology
    private(set) var signal: RadioSignal?
    private var signalAt: Date?
    private let upAt: ClockReading
    private var samples: [Sample] = []
    private var transfers: [Transfer] = []
    private var measured: Measured?
    /// When the last sample came (measured), else nil.
    private var lastMeasurement: ClockReading?
    /// The technology's typical type, from link-up until something is measured or it runs out.
    private var typical: LinkQuality.EffectiveType?
    /// Something was known and ran out: the class is unknown rather than nothing.
    private var expired = false
    private var stale = false
    private var rttMs: Double?
    private var minRttMs: Double?
    private var downlinkKbps: Double?
    private var lossPercent: Double?
    private var sampleCount = 0
    private var source = LinkQuality.Source.default

    init(_ uplink: QualityUplink, now: ClockReading) {
        name = uplink.name
        technology = uplink.technology
        upAt = now
        typical = uplink.technology.typicalType
        setSignal(uplink.signal, now: now)
    }

    // MARK: What it shows

    /// The uplink's quality now; nil while nothing at all is known.
    func quality(_ c: Configuration) -> LinkQuality? {
        let radioLevel = signal?.level
        if let measured, let at = lastMeasurement {
            var type = measured.type.current
            if let radioLevel, radioLevel <= c.radioCapLevel { type = min(type, .twoG) }
            return LinkQuality(level: c.level(type: type, loss: measured.loss.current, radioLevel: radioLevel),
                               effectiveType: type, rttMs: rttMs, minRttMs: minRttMs, downlinkKbps: downlinkKbps,
                               lossPercent: lossPercent, samples: sampleCount, source: source, measuredAt: at.wall,
                               stale: stale, signal: signal)
        }
        if let signal, let signalAt {
            // Idle or new: the radio seeds the class.
            let type = c.radioType(level: signal.level, technology: technology)
            return LinkQuality(level: c.level(type: type, loss: .low, radioLevel: signal.level), effectiveType: type,
                               source: .radio, measuredAt: signalAt, signal: signal)
        }
        if let typical {
            return LinkQuality(level: c.level(type: typical, loss: .low, radioLevel: nil), effectiveType: typical,
                               source: .default, measuredAt: upAt.wall, stale: stale)
        }
        if expired {
            return LinkQuality(level: .unknown, rttMs: rttMs, minRttMs: minRttMs, source: source,
                               measuredAt: lastMeasurement?.wall ?? upAt.wall, stale: true)
        }
        return nil
    }

    // MARK: Inputs

    /// The modem's radio (nil: none, or no longer reported).
    mutating func setSignal(_ new: RadioSignal?, now: ClockReading) {
        guard new != signal || (new != nil && signalAt == nil) else { return }
        signal = new
        signalAt = new == nil ? nil : now.wall
    }

    /// Samples of one dump or one check, taken at `now`; `interval`: seconds the dump's byte
    /// counts cover. None: idle, nothing changes.
    mutating func add(_ new: [QualitySample], interval: TimeInterval?, now: ClockReading, _ c: Configuration) {
        var valid = new.filter { $0.rttMs.isFinite && $0.rttMs > 0 }
        guard !valid.isEmpty else { return }
        if let last = lastMeasurement, now.seconds(since: last) >= c.staleAfter {
            // What was measured long ago says nothing of now: measured afresh.
            measured = nil
            samples = []
            transfers = []
        }
        var weight = 1.0
        if valid.count > c.maximumSamplesPerDump, c.maximumSamplesPerDump > 0 {
            // Evenly spaced quantiles, each standing for its share: the median is kept.
            valid.sort { $0.rttMs < $1.rttMs }
            let n = valid.count, k = c.maximumSamplesPerDump
            weight = Double(n) / Double(k)
            valid = (0..<k).map { valid[min(($0 * n + n / 2) / k, n - 1)] }
        }
        for sample in valid {
            let floor = sample.minRttMs.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? sample.rttMs
            samples.append(Sample(uptime: now.uptime, rttMs: sample.rttMs, minRttMs: min(floor, sample.rttMs),
                                  weight: weight, passive: sample.source == .passive))
        }
        var sent: UInt64 = 0, retransmitted: UInt64 = 0, bytes: UInt64 = 0, moved = false
        for sample in new where sample.source == .passive {
            if let s = sample.segmentsSent { sent &+= s; retransmitted &+= min(sample.segmentsRetransmitted ?? 0, s) }
            if let b = sample.bytesReceived { bytes &+= b; moved = true }
        }
        if sent > 0 { transfers.append(Transfer(uptime: now.uptime, sent: Double(sent), retransmitted: Double(retransmitted))) }
        if moved, let interval, interval > 0 { downlinkKbps = Double(bytes) * 8 / interval / 1000 }
        lastMeasurement = now
        stale = false
        expired = false
        typical = nil
        prune(now: now.uptime, c)
        evaluate(now: now.uptime, c)
    }

    /// Time passed: the class goes stale, then unknown, when nothing was measured.
    mutating func age(now: ClockReading, _ c: Configuration) {
        let since: ClockReading
        if measured != nil, let last = lastMeasurement {
            since = last
        } else if typical != nil {
            since = upAt
        } else {
            return
        }
        // A microsecond early counts: a timer armed for the deadline may read a hair before it.
        let elapsed = now.seconds(since: since) + 1e-6
        if elapsed >= c.unknownAfter {
            measured = nil
            typical = nil
            samples = []
            transfers = []
            expired = true
            stale = true
        } else if elapsed >= c.staleAfter {
            stale = true
        }
        prune(now: now.uptime, c)
    }

    /// The uptime at which `age` next changes something; nil: nothing left to run out.
    func nextDeadline(_ c: Configuration) -> TimeInterval? {
        let since: TimeInterval
        if measured != nil, let last = lastMeasurement {
            since = last.uptime
        } else if typical != nil {
            since = upAt.uptime
        } else {
            return nil
        }
        return stale ? since + c.unknownAfter : since + c.staleAfter
    }

    /// The samples are dropped (the machine slept: what they measured is gone); the class
    /// stays, and runs out by its age as before.
    mutating func forgetSamples() {
        samples = []
        transfers = []
        if let held = measured {
            measured = Measured(type: QualityHysteresis(held.type.current), loss: QualityHysteresis(held.loss.current))
        }
    }

    // MARK: Classifying

    private mutating func prune(now: TimeInterval, _ c: Configuration) {
        if let keep = samples.firstIndex(where: { now - $0.uptime <= c.sampleHorizon }) {
            if keep > 0 { samples.removeFirst(keep) }
        } else {
            samples = []
        }
        if samples.count > c.maximumSamples { samples.removeFirst(samples.count - c.maximumSamples) }
        if let keep = transfers.firstIndex(where: { now - $0.uptime <= c.sampleHorizon }) {
            if keep > 0 { transfers.removeFirst(keep) }
        } else {
            transfers = []
        }
    }

    /// The figures from the samples, and the class they hold.
    private mutating func evaluate(now: TimeInterval, _ c: Configuration) {
        guard samples.count >= max(c.minimumSamples, 1) else { return }
        let decay = { (uptime: TimeInterval) in c.halfLife > 0 ? Self.halved(max(now - uptime, 0) / c.halfLife) : 1 }
        let weighted = samples.map { (rtt: $0.rttMs, weight: $0.weight * decay($0.uptime)) }.sorted { $0.rtt < $1.rtt }
        let total = weighted.reduce(0) { $0 + $1.weight }
        var cumulative = 0.0
        var median = weighted[weighted.count - 1].rtt
        for entry in weighted {
            cumulative += entry.weight
            if cumulative >= total / 2 { median = entry.rtt; break }
        }
        rttMs = median
        minRttMs = samples.map(\.minRttMs).min()
        sampleCount = Int(samples.reduce(0) { $0 + $1.weight }.rounded())
        source = samples.contains { $0.passive } ? .passive : .probe
        var sent = 0.0, retransmitted = 0.0
        for transfer in transfers {
            let w = decay(transfer.uptime)
            sent += w * transfer.sent
            retransmitted += w * transfer.retransmitted
        }
        lossPercent = sent >= c.minimumSegmentsForLoss && sent > 0 ? 100 * retransmitted / sent : nil

        let up = 1 + c.margin, down = max(1 - c.margin, 0.01)
        guard var held = measured else {
            measured = Measured(type: QualityHysteresis(c.effectiveType(rttMs: median)),
                                loss: QualityHysteresis(lossPercent.map { c.lossBand(percent: $0) } ?? .low))
            return
        }
        _ = held.type.update(optimistic: c.effectiveType(rttMs: median / up), pessimistic: c.effectiveType(rttMs: median / down),
                             now: now, worseAfter: c.worseAfterEvaluations, betterAfter: c.betterAfter,
                             reversalHold: c.reversalHold)
        if let loss = lossPercent {
            _ = held.loss.update(optimistic: c.lossBand(percent: loss / up), pessimistic: c.lossBand(percent: loss / down),
                                 now: now, worseAfter: c.worseAfterEvaluations, betterAfter: c.betterAfter,
                             reversalHold: c.reversalHold)
        }
        measured = held
    }

    /// 2^-`times` for `times` ≥ 0: the weight of a sample `times` half-lives old (Core has no libm).
    static func halved(_ times: Double) -> Double {
        guard times.isFinite, times < 1000 else { return 0 }
        let whole = times.rounded(.down), fraction = times - whole
        // 2^-f = e^(-f ln 2), f in [0, 1): the series converges to double precision in 20 terms.
        let x = -fraction * 0.693_147_180_559_945_3
        var term = 1.0, sum = 1.0
        for n in 1...20 {
            term *= x / Double(n)
            sum += term
        }
        return Double(sign: .plus, exponent: -Int(whole), significand: sum)
    }
}
