import Dispatch
import FoundationEssentials
import ReachabilityCore
import ReachabilityLinux
import ReachabilityServer
import ReachabilitySystem

/// reachd's metrics (`[Metrics]`): counts what the monitor, the connectivity check and the server
/// do, and renders it for the HTTP responder and the textfile.
///
/// Everything runs on a queue of its own. The monitor's observer only reads the clock and hands
/// the event over (`async`), so neither a scrape, nor rendering, nor a slow disk ever delays an
/// event; rendering asks the server for its figures (waiting for the monitor's queue, never the
/// other way round).
final class MetricsCollector: @unchecked Sendable {
    let queue = DispatchQueue(label: "reachd.metrics")
    private let monitor: ReachabilityMonitor
    private let server: ReachabilityServer
    private let log: LogSink
    // Confined to `queue`.
    private var recorder: MetricsRecorder
    private var lastSequence: Int
    private var textfile: MetricsTextfile?
    private var textfileFailing = false
    private var textfileWriteScheduled = false
    private var textfileTimer: DispatchSourceTimer?
    private var http: MetricsHTTPServer?
    /// Whether the system bus is connected; nil while reachd does not use it.
    private var systemBusConnected: Bool?

    /// - Parameter clock: the daemon's clock; its wall time is the start time shown.
    init(initial: ReachabilityEvent, monitor: ReachabilityMonitor, server: ReachabilityServer, log: LogSink, clock: ReachdClock) {
        self.monitor = monitor
        self.server = server
        self.log = log
        recorder = MetricsRecorder(status: initial.current, now: Self.clock(), startedAt: clock.now().wall)
        lastSequence = initial.sequence
    }

    /// CLOCK_MONOTONIC in nanoseconds: never steps with the wall clock, and stands still while the
    /// machine is suspended (when reachd sees no state at all).
    static func clock() -> UInt64 {
        MonotonicClock.nanoseconds()
    }

    /// An event of the monitor (on the monitor's queue): timed now, counted on `queue`.
    func record(_ event: ReachabilityEvent) {
        let now = Self.clock()
        queue.async { [self] in
            guard event.sequence > lastSequence else { return }
            lastSequence = event.sequence
            recorder.record(event, now: now)
            changed()
        }
    }

    /// The monitor's state, when it moved on before `record` was wired: the status is taken
    /// without counting an event.
    func catchUp(_ event: ReachabilityEvent) {
        let now = Self.clock()
        queue.async { [self] in
            guard event.sequence > lastSequence else { return }
            lastSequence = event.sequence
            recorder.replaceStatus(event.current, now: now)
            changed()
        }
    }

    /// The status moved on without an event (a link's newest RTT): the gauges show it.
    func refresh(_ status: Status) {
        let now = Self.clock()
        queue.async { [self] in
            recorder.replaceStatus(status, now: now)
            changed()
        }
    }

    /// The system bus was connected or lost (on the bus's queue).
    func recordSystemBus(connected: Bool) {
        queue.async { [self] in
            guard systemBusConnected != connected else { return }
            systemBusConnected = connected
            changed()
        }
    }

    /// A connectivity check that ran to its end (on the checker's queue).
    func recordProbe(_ probe: Probe, api: Bool) {
        queue.async { [self] in
            recorder.recordProbe(probe, api: api)
            changed()
        }
    }

    /// The metrics now, in the Prometheus text format (on `queue`).
    func render() -> String {
        let statistics = server.statistics
        let sample = recorder.sample(now: Self.clock(), version: ReachdVersion.string,
                                     subscribers: statistics.subscribers,
                                     connectionsRejected: Dictionary(uniqueKeysWithValues: statistics.rejections.map { ($0.key.rawValue, $0.value) }),
                                     netlinkOverruns: monitor.overrunCount)
        var withBus = sample
        withBus.systemBusConnected = systemBusConnected
        return PrometheusExposition.render(withBus)
    }

    /// Serves `GET /metrics` on `address`. Throws when the address cannot be bound.
    func listen(_ address: MetricsListenAddress) throws {
        let server = MetricsHTTPServer(queue: queue, log: log) { [unowned self] in render() }
        try server.listen(address)
        queue.sync { http = server }
    }

    /// Keeps `directory/reachd.prom` current: now, on every change and every `interval` seconds.
    func writeTextfile(in directory: String, every interval: Double) {
        queue.sync {
            textfile = MetricsTextfile(directory: directory)
            writeTextfileNow()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let period = DispatchTimeInterval.milliseconds(Int(interval * 1000))
            timer.schedule(deadline: .now() + period, repeating: period)
            timer.setEventHandler { [weak self] in self?.writeTextfileNow() }
            timer.resume()
            textfileTimer = timer
        }
    }

    func stop() {
        queue.sync {
            http?.stop()
            http = nil
            textfileTimer?.cancel()
            textfileTimer = nil
        }
    }

    /// Something counted changed: rewrite the textfile, once for a burst of changes queued together.
    private func changed() {
        guard textfile != nil, !textfileWriteScheduled else { return }
        textfileWriteScheduled = true
        queue.async { [self] in
            textfileWriteScheduled = false
            writeTextfileNow()
        }
    }

    private func writeTextfileNow() {
        guard let textfile else { return }
        do {
            try textfile.write(render())
            if textfileFailing { log.info("metrics: writing \(textfile.path) again") }
            textfileFailing = false
        } catch {
            // Once per failing stretch, not every interval.
            if textfileFailing {
                log.debug("metrics: writing \(textfile.path) failed again")
            } else {
                log.warning("metrics: \(error)")
            }
            textfileFailing = true
        }
    }
}
