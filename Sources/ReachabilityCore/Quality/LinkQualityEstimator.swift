import FoundationEssentials

/// How good each uplink is (`LinkQuality`), from what is measured over it: the passive samples
/// of every app's TCP sockets (`QualityDump`), reachd's own checks, the modem's radio, and,
/// before any of those, what its technology usually gives. Pure: a value the monitor's
/// scheduler holds and feeds with `now`.
///
/// The rules:
/// - RTT is the time-weighted median of the samples (each counts half after `halfLife`, 20 s),
///   so a step shows in about 20–30 s; samples start afresh when the uplink comes up again;
/// - `effectiveType` from Chromium's transport-RTT thresholds (≥ 1870 ms `slow-2g`, ≥ 1280 ms
///   `2g`, ≥ 204 ms `3g`, else `4g`); loss is retransmitted over sent segments; `level` is
///   Apple's: good = `4g` with loss < 2 %, moderate = `3g` or loss 2–10 %, minimal = `2g` or
///   `slow-2g`, loss ≥ 10 %, or a radio at one bar or none (which also caps the type at `2g`);
/// - against noise: worse only after two evaluations in a row beyond a threshold by 10 %, better
///   only after 30 s all within it by 10 % (RTT and loss each on their own), and a change back
///   the other way not within a minute of the last change;
/// - the first measurement (after link-up, an idle spell of `staleAfter`, or the class running
///   out) is taken as it is: a guess or an old class gives way at once;
/// - an uplink that moves nothing keeps its class; it is `stale` after `staleAfter` (5 min),
///   `unknown` after `unknownAfter` (15 min) — or, for a modem, what its radio suggests;
/// - before anything is measured the radio seeds the class, else the technology's typical one
///   (source `default`, given at link-up only).
///
/// Every input returns the uplinks whose class (`level`, `effectiveType`, or being known at all)
/// changed: the monitor's event for them. Figures alone change without one.
public struct LinkQualityEstimator: Sendable {
    public private(set) var configuration: Configuration
    private var uplinks: [Int: UplinkQualityEstimate] = [:]

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The uplinks it knows, by index, ascending.
    public var indexes: [Int] { uplinks.keys.sorted() }

    /// The quality of the uplink at `index`; nil when it is not an uplink or nothing is known yet.
    public func quality(for index: Int) -> LinkQuality? {
        uplinks[index]?.quality(configuration)
    }

    /// Every known uplink's quality, by index.
    public var qualities: [Int: LinkQuality] {
        var result: [Int: LinkQuality] = [:]
        for (index, uplink) in uplinks { result[index] = uplink.quality(configuration) }
        return result
    }

    /// The name the uplink at `index` was given.
    public func name(of index: Int) -> String? { uplinks[index]?.name }

    /// The uplinks there are now: new ones come up (samples afresh, the typical class of their
    /// technology), missing ones go down (forgotten), and each one's radio is taken.
    @discardableResult
    public mutating func uplinks(_ list: [QualityUplink], now: ClockReading) -> Set<Int> {
        var changed: Set<Int> = []
        let present = Set(list.map(\.index))
        for index in uplinks.keys where !present.contains(index) {
            if linkDown(index) { changed.insert(index) }
        }
        for uplink in list {
            if linkUp(uplink, now: now) { changed.insert(uplink.index) }
        }
        return changed
    }

    /// The uplink is up (again): a new one starts afresh; a known one keeps its samples and
    /// takes the new name, technology and radio. True when its class changed.
    @discardableResult
    public mutating func linkUp(_ uplink: QualityUplink, now: ClockReading) -> Bool {
        guard uplinks[uplink.index] != nil else {
            let fresh = UplinkQualityEstimate(uplink, now: now)
            uplinks[uplink.index] = fresh
            return fresh.quality(configuration) != nil
        }
        return changing(uplink.index) { estimate, c in
            estimate.name = uplink.name
            estimate.technology = uplink.technology
            estimate.setSignal(uplink.signal, now: now)
        }
    }

    /// The uplink went down or away: all it measured goes. True when it had a class.
    @discardableResult
    public mutating func linkDown(_ index: Int) -> Bool {
        uplinks.removeValue(forKey: index)?.quality(configuration) != nil
    }

    /// The modem's radio on the uplink (nil: no longer reported). True when the class changed.
    @discardableResult
    public mutating func radio(_ signal: RadioSignal?, index: Int, now: ClockReading) -> Bool {
        changing(index) { estimate, _ in estimate.setSignal(signal, now: now) }
    }

    /// One passive dump: the uplinks with samples are evaluated; those without are idle.
    public mutating func measured(_ dump: QualityDump, now: ClockReading) -> Set<Int> {
        // The samples are as old as the dump, not as the moment it is handed over.
        let at = ClockReading(wall: now.wall.addingTimeInterval(dump.uptime - now.uptime), uptime: dump.uptime)
        var changed: Set<Int> = []
        for (index, samples) in dump.samples where !samples.isEmpty && uplinks[index] != nil {
            if changing(index, { estimate, c in estimate.add(samples, interval: dump.interval, now: at, c) }) {
                changed.insert(index)
            }
        }
        return changed
    }

    /// One RTT sample of a check over the uplink at `index` (see `checkRTT(ofRoundTripMs:)`).
    /// True when the class changed.
    @discardableResult
    public mutating func probed(index: Int, rttMs: Double, now: ClockReading) -> Bool {
        changing(index) { estimate, c in
            estimate.add([QualitySample(interfaceIndex: index, source: .probe, rttMs: rttMs)], interval: nil, now: now, c)
        }
    }

    /// The transport RTT of a connectivity check that took `roundTripMs` from the connect to the
    /// complete answer: the connect and the request are two round trips.
    public static func checkRTT(ofRoundTripMs roundTripMs: Double) -> Double { roundTripMs / 2 }

    /// Time passed: classes not measured for `staleAfter` are stale, for `unknownAfter` unknown.
    public mutating func tick(now: ClockReading) -> Set<Int> {
        var changed: Set<Int> = []
        for index in uplinks.keys {
            if changing(index, { estimate, c in estimate.age(now: now, c) }) { changed.insert(index) }
        }
        return changed
    }

    /// When `tick` next has something to do (uptime); nil: nothing runs out.
    public var nextDeadline: TimeInterval? {
        uplinks.values.compactMap { $0.nextDeadline(configuration) }.min()
    }

    /// The samples go (the machine slept); the classes stay and run out by their age.
    public mutating func forgetSamples() {
        for index in uplinks.keys { uplinks[index]?.forgetSamples() }
    }

    /// New constants; what was measured stays.
    public mutating func reconfigure(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Runs `body` on the uplink at `index`; true when its class changed.
    private mutating func changing(_ index: Int, _ body: (inout UplinkQualityEstimate, Configuration) -> Void) -> Bool {
        guard var estimate = uplinks[index] else { return false }
        let before = estimate.quality(configuration)
        body(&estimate, configuration)
        uplinks[index] = estimate
        return LinkQuality.differsInClass(before, estimate.quality(configuration))
    }
}
