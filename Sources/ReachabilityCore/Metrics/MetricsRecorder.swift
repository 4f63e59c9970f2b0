import FoundationEssentials

/// The daemon's counters for Prometheus: time spent in each status and connectivity verdict,
/// events by reason, connectivity checks by verdict and round trip, data stalls by interface.
///
/// Time is given in nanoseconds of a monotonic clock (the caller reads it, so this stays pure and
/// testable) and summed in integers: the time-in-state counters are exact — their sum is the
/// time since `init` to the nanosecond — and only ever rise, whatever order or duplicates the
/// readings come in (a reading older than the last one counts as no time).
public struct MetricsRecorder: Sendable {
    public private(set) var status: Status
    public private(set) var events: [Reason.Code: Int]
    public private(set) var lastChange: Date
    public private(set) var probes: [Connectivity: Int]
    /// Requests to captive-portal APIs, by what they said (`portal`, `full`: not captive, `limited`: failed).
    public private(set) var apiProbes: [Connectivity: Int]
    public private(set) var probeDurations = MetricsHistogram()
    /// Data stalls suspected, by interface name: each stall once, when a status first shows it.
    public private(set) var dataStalls: [String: Int] = [:]
    private var statusNanoseconds: [NetworkStatus: UInt64]
    private var connectivityNanoseconds: [Connectivity: UInt64]
    /// The clock reading up to which time has been accounted.
    private var accountedUntil: UInt64

    /// Starts counting at `now` in `status` (the daemon's first state).
    public init(status: Status, now: UInt64, startedAt: Date) {
        self.status = status
        accountedUntil = now
        lastChange = startedAt
        statusNanoseconds = Dictionary(uniqueKeysWithValues: NetworkStatus.allCases.map { ($0, 0) })
        connectivityNanoseconds = Dictionary(uniqueKeysWithValues: Connectivity.allCases.map { ($0, 0) })
        // Every reason an event can carry starts at 0, so `rate()` sees the series from the start.
        events = Dictionary(uniqueKeysWithValues: Reason.Code.allCases.filter { $0 != .initial }.map { ($0, 0) })
        // The verdicts an HTTP check can reach; `unknown` and `none` are never checked for.
        probes = [.portal: 0, .limited: 0, .full: 0]
        apiProbes = [.portal: 0, .limited: 0, .full: 0]
    }

    /// An event happened at `now`: the time until then belongs to the old status.
    public mutating func record(_ event: ReachabilityEvent, now: UInt64) {
        account(until: now)
        countNewStalls(in: event.current)
        status = event.current
        events[event.reason.code, default: 0] += 1
        lastChange = event.timestamp
    }

    /// The status is now `status` without an event for it (a state read again): the time until
    /// `now` belongs to the old status, and no event is counted.
    public mutating func replaceStatus(_ status: Status, now: UInt64) {
        account(until: now)
        countNewStalls(in: status)
        self.status = status
    }

    /// Counts each stall `next` shows that the status before did not: on an interface that had
    /// none, or another one (a stall is known by when it was suspected, so one that ended and
    /// began again between two statuses still counts, and one shown again does not).
    private mutating func countNewStalls(in next: Status) {
        for interface in next.interfaces {
            guard let stall = interface.stall else { continue }
            let before = status.interfaces.first { $0.index == interface.index }?.stall
            if before?.since != stall.since { dataStalls[interface.name, default: 0] += 1 }
        }
    }

    /// A connectivity check finished with `probe`: the HTTP check, or (`api`) a request to a
    /// captive-portal API, which is counted apart and not in the HTTP round trips.
    public mutating func recordProbe(_ probe: Probe, api: Bool = false) {
        if api {
            apiProbes[probe.result, default: 0] += 1
            return
        }
        probes[probe.result, default: 0] += 1
        if let rttMs = probe.rttMs { probeDurations.observe(rttMs / 1000) }
    }

    /// The metrics as of `now`, the current stretch of time included; the server's figures are
    /// the caller's. The time until `now` is accounted for good: an event that happened before
    /// `now` but is recorded after this sample begins at `now`, so no scraper ever sees a
    /// counter fall (which Prometheus would take for a restart).
    public mutating func sample(now: UInt64, version: String, subscribers: Int = 0,
                                connectionsRejected: [String: Int] = [:], netlinkOverruns: Int = 0) -> MetricsSample {
        account(until: now)
        return MetricsSample(version: version, status: status,
                             statusSeconds: statusNanoseconds.mapValues(Self.seconds),
                             connectivitySeconds: connectivityNanoseconds.mapValues(Self.seconds),
                             events: events, lastChange: lastChange, probes: probes, apiProbes: apiProbes, probeDurations: probeDurations,
                             subscribers: subscribers, connectionsRejected: connectionsRejected,
                             netlinkOverruns: netlinkOverruns, dataStalls: dataStalls)
    }

    private mutating func account(until now: UInt64) {
        guard now > accountedUntil else { return }
        let elapsed = now - accountedUntil
        statusNanoseconds[status.status, default: 0] += elapsed
        connectivityNanoseconds[status.connectivity, default: 0] += elapsed
        accountedUntil = now
    }

    private static func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }
}
